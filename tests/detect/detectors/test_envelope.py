"""What wraps an answer says nothing of it: an MCP result dumped whole, a logger's stamps."""

from __future__ import annotations

import json

import pytest

from heartbeat.detect.detectors.envelope import answer_text, mcp_text


def _result(*blocks: dict[str, object], **fields: object) -> str:
    return json.dumps({"content": list(blocks), **fields})


def test_an_mcp_result_dumped_whole_is_the_text_it_carries() -> None:
    """The SDK's ``model_dump_json()`` of a tool's result (``_meta`` first, ``isError`` false):
    its text blocks, one per line; structured content alone, as JSON."""
    text = {"type": "text", "text": "No new messages."}
    assert mcp_text(_result(text, isError=False)) == "No new messages."
    dumped = json.dumps({"_meta": None, "content": [text, text], "structuredContent": None, "isError": False})
    assert mcp_text(dumped) == "No new messages.\nNo new messages."
    assert mcp_text(_result(structuredContent={"count": 0})) == '{"count": 0}'


@pytest.mark.parametrize(
    "output",
    [
        _result({"type": "text", "text": "quota exceeded"}, isError=True),  # a failure, read as one
        _result(
            {"type": "text", "text": "a chart"}, {"type": "image", "data": "iVBOR", "mimeType": "image/png"}
        ),
        json.dumps({"content": [{"type": "text", "text": "x"}], "author": "kim"}),  # a document, no result
        json.dumps({"title": "t" * 40, "content": [{"type": "text", "text": "x"}]}),
        '{"content": "a post\'s body"}',
        "content: plain text",
    ],
)
def test_anything_else_is_no_mcp_result_to_unwrap(output: str) -> None:
    """A failed result stays whole (its ``isError`` is how it says so), one holding an image is
    more than text, and JSON that only has a ``content`` field is the answer itself."""
    assert mcp_text(output) is None


def test_the_answer_is_read_without_its_envelope_and_its_stamps() -> None:
    """A logger's stamped lines inside an MCP result: the words the tool said."""
    stamped = "[2026-03-04T05:06:14Z] All systems operational"
    assert answer_text(_result({"type": "text", "text": stamped}, isError=False)) == "All systems operational"
    assert answer_text(stamped) == "All systems operational"
    assert answer_text("plain") == "plain"
