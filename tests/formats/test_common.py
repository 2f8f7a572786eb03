"""The helpers the tool-calling formats share: pairing results with calls, results as text."""

from __future__ import annotations

import pytest

from heartbeat.formats.common import Calls, action, failed_text, objects, result_text


def test_results_go_to_the_oldest_open_call_with_their_id() -> None:
    """A reused id answers its calls in order; an orphan result is dropped; an unanswered call keeps None."""
    calls = Calls()
    calls.call("c", "search", {"q": "a"})
    calls.call("d", "fetch", {"url": "u"})
    assert calls.result("c", "first", None)
    calls.call("c", "search", {"q": "b"})
    assert calls.result("c", "Error: second", "tool_error")
    assert not calls.result("c", "third", None)
    assert not calls.result("zzz", "orphan", None)
    calls.add(action("respond", {"content": "hi"}, "ok", None))
    assert [(a["args"], a["output"], a["error"]) for a in calls.actions] == [
        ({"q": "a"}, "first", None),
        ({"url": "u"}, None, None),
        ({"q": "b"}, "Error: second", "tool_error"),
        ({"content": "hi"}, "ok", None),
    ]


def test_result_text_keeps_strings_joins_text_parts_and_dumps_the_rest() -> None:
    """Text stays text; text blocks are joined; a structured result is compact, key-sorted JSON."""
    assert result_text("plain") == "plain"
    assert result_text(None) == ""
    assert (
        result_text([{"type": "text", "text": "a"}, {"type": "image"}, {"type": "text", "text": "b"}]) == "ab"
    )
    assert result_text({"b": 1, "a": [2]}) == '{"a":[2],"b":1}'
    assert result_text([{"loc": ["x"], "msg": "bad"}]) == '[{"loc":["x"],"msg":"bad"}]'


def test_failed_text_knows_the_error_conventions() -> None:
    """ "Error..." and the Agents SDK's fixed text are failures; other text and no text are not."""
    assert failed_text("Error: no such order")
    assert failed_text("An error occurred while running the tool. Please try again.")
    assert not failed_text("3 errors fixed") and not failed_text(None) and not failed_text("")


def test_objects_names_what_is_not_a_list_of_objects() -> None:
    """The ValueError names the item, counted from 1, so the one-line error points at it."""
    assert objects([{}, {"a": 1}], "item") == [{}, {"a": 1}]
    with pytest.raises(ValueError, match="no list of parts"):
        objects({"a": 1}, "part")
    with pytest.raises(ValueError, match="message 2 is not a JSON object"):
        objects([{}, "x"], "message")
