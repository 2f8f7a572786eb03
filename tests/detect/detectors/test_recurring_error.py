"""``recurring_error``: the same error again and again, told apart from different errors."""

from __future__ import annotations

from typing import Any

import pytest

from heartbeat.base.errors import ConfigError
from heartbeat.detect.detectors import RecurringError

from .helpers import Call, actions, first, trips


def test_a_different_invalid_action_each_time_is_a_recurring_error() -> None:
    """Clicking size after size, each rejected with the same message."""
    calls: list[Call] = []
    for size in ["11 women", "12 women", "12.5 women", "13.5 women"]:
        calls.append({"tool": "think", "args": {"cmd": f"think[no size {size}]"}, "output": "OK."})
        calls.append(
            {
                "tool": "click",
                "args": {"cmd": f"click[{size}]"},
                "output": "Invalid action!",
                "error": "invalid_action",
            }
        )
    hit = first(RecurringError(), actions(calls))
    assert hit is not None and hit[0] == 6
    assert "click failed with the same error 3 times" in hit[1].message and "invalid_action" in hit[1].message


def test_every_message_names_its_evidence() -> None:
    """Each v2 anomaly says which call, how many times, and over how many actions."""
    calls: list[Call] = [
        {
            "tool": "lookup",
            "args": {"cmd": f"Lookup[Aunt May {i}]"},
            "output": "No more results.",
            "error": "not_found",
        }
        for i in range(3)
    ]
    hit = first(RecurringError(), actions(calls))
    assert hit is not None
    anomaly = hit[1]
    evidence: dict[str, Any] = anomaly.evidence
    assert evidence["count"] == 3 and evidence["window"] == 10 and "Lookup[Aunt May 2]" in evidence["call"]
    assert "3 times in the last 10 actions" in anomaly.message and "not_found" in anomaly.message


@pytest.mark.parametrize(
    ("make", "words"),
    [
        (lambda: RecurringError(threshold=1), "recurring_error: threshold must be an integer between 2"),
        (
            lambda: RecurringError(threshold=4, window=3),
            "recurring_error: window must be an integer between 4",
        ),
        (lambda: RecurringError(window=10_001), "window"),
        (lambda: RecurringError(threshold="3"), "threshold"),  # type: ignore[arg-type]
    ],
)
def test_bad_parameters_are_config_errors(make: Any, words: str) -> None:
    """A detector refuses parameters that could never work, naming the parameter."""
    with pytest.raises(ConfigError, match=words):
        make()


def test_a_bare_exit_code_is_the_same_error_only_from_the_same_call() -> None:
    """grep without a match (exit 1, no output) for other patterns is searching; the same grep is stuck."""
    searching: list[Call] = [
        {"tool": "grep", "args": {"cmd": f"grep -rn {word} src"}, "output": "", "error": "returncode 1"}
        for word in ("parse", "render", "flush", "close")
    ]
    assert trips(RecurringError(), actions(searching)) == [None] * 4
    stuck: list[Call] = [
        {"tool": "grep", "args": {"cmd": "grep -rn parse src"}, "output": "", "error": "returncode 1"}
    ]
    found = trips(RecurringError(), actions(stuck * 3))
    assert found[:2] == [None, None] and found[2] is not None and found[2].evidence["count"] == 3


def test_only_errors_within_the_window_count() -> None:
    """Two failures in the last ten actions are not three; a window of twelve reaches back to the first."""
    error: Call = {"tool": "book", "args": {"n": 1}, "output": "Error: card declined", "error": "tool_error"}
    calls: list[Call] = [error]
    calls += [{"tool": "search", "args": {"q": f"q{i}"}, "output": f"result {i} " * 3} for i in range(9)]
    calls += [error, error]
    assert trips(RecurringError(), actions(calls)) == [None] * 12
    hit = first(RecurringError(window=12), actions(calls))
    assert hit is not None and hit[0] == 12 and "3 times in the last 12 actions" in hit[1].message


def test_exempt_tools_are_invisible_to_recurring_error() -> None:
    """An exempt tool failing the same way again is not reported, and takes no place in the window."""
    rejected: Call = {
        "tool": "click",
        "args": {"cmd": "click[x]"},
        "output": "Invalid action!",
        "error": "invalid",
    }
    assert trips(RecurringError(exempt={"click"}), actions([rejected] * 4)) == [None] * 4
    calls: list[Call] = [rejected]
    calls += [{"tool": "log", "args": {"i": i}, "output": "ok"} for i in range(9)]
    calls += [rejected, rejected]
    assert trips(RecurringError(), actions(calls))[-1] is None  # the first rejection left the window
    assert trips(RecurringError(exempt={"log"}), actions(calls))[-1] is not None
