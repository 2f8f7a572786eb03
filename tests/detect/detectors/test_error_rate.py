"""``error_rate``: many of the last W actions failed, and the failures repeat."""

from __future__ import annotations

from typing import Any

import pytest

from heartbeat.base.errors import ConfigError
from heartbeat.detect.detectors import ErrorRate

from .helpers import REJECTED_TURN, Call, actions, trips


def test_three_errors_in_a_window_of_four_trip_error_rate_at_75_percent() -> None:
    """3 failures in the last 4 actions is 75%, over a threshold of 0.5."""
    calls: list[Call] = [
        {"tool": "fetch", "args": {"u": 1}, "error": "503"},
        {"tool": "fetch", "args": {"u": 2}},
        {"tool": "fetch", "args": {"u": 3}, "error": "503"},
        {"tool": "fetch", "args": {"u": 4}, "error": "503"},
    ]
    found = trips(ErrorRate(window=4, threshold=0.5), actions(calls))
    assert found[:3] == [None] * 3
    anomaly = found[3]
    assert anomaly is not None
    assert anomaly.message.startswith("3 of 4 actions failed (75%), last: fetch: 503")
    assert anomaly.evidence["rate"] == 0.75 and anomaly.evidence["failing"] == {"fetch": 3}
    assert anomaly.evidence["distinct"] == 1 and anomaly.message.endswith("1 different failure(s) among them")


def test_failures_that_all_differ_are_debugging_not_an_error_rate() -> None:
    """A reproduction script re-run after each edit, crashing differently each time: no error_rate."""
    calls: list[Call] = []
    for i in range(6):
        calls.append({"tool": "edit", "args": {"path": "fix.py", "n": i}, "output": "edited"})
        calls.append(
            {"tool": "python", "args": {"cmd": "python repro.py"}, "error": "exit 1",
             "output": f"Traceback ...\nNameError: name 'v{i}' is not defined"}
        )  # fmt: skip
    assert trips(ErrorRate(window=10, threshold=0.5), actions(calls)) == [None] * 12
    # The same script failing the same way between the edits is an error rate (and recurring_error's).
    for call in calls[1::2]:
        call["output"] = "Traceback ...\nNameError: name 'v' is not defined"
    found = trips(ErrorRate(window=10, threshold=0.5), actions(calls))
    assert found[9] is not None and found[9].evidence["distinct"] == 1


def test_error_rate_is_checked_only_after_a_failure() -> None:
    """A success in a bad window reports nothing; the next failure does."""
    calls: list[Call] = [{"tool": "f", "args": {"i": i}, "error": "x"} for i in range(3)]
    calls.append({"tool": "f", "args": {"i": 9}})
    calls.append({"tool": "f", "args": {"i": 10}, "error": "x"})
    found = trips(ErrorRate(window=4, threshold=0.5), actions(calls))
    assert found[3] is None and found[4] is not None


def test_error_rate_waits_for_a_full_window() -> None:
    """Fewer than W actions never trip error_rate, even if all failed."""
    calls: list[Call] = [{"tool": "f", "args": {"i": i}, "error": "x"} for i in range(9)]
    assert trips(ErrorRate(), actions(calls)) == [None] * 9


def test_error_rate_threshold_is_compared_as_a_quotient() -> None:
    """3 of 10 reaches a threshold of 0.3 even though 0.3 * 10 is not exactly 3."""
    calls: list[Call] = [{"tool": "f", "args": {"i": i}} for i in range(7)]
    calls += [{"tool": "f", "args": {"i": i}, "error": "x"} for i in range(7, 10)]
    assert trips(ErrorRate(window=10, threshold=0.3), actions(calls))[-1] is not None


@pytest.mark.parametrize(
    ("make", "words"),
    [
        (lambda: ErrorRate(threshold=1.5), "threshold"),
        (lambda: ErrorRate(window=0), "window must be an integer between 1"),
        (lambda: ErrorRate(threshold=0), "threshold must be a number in"),
        (lambda: ErrorRate(threshold=True), "threshold"),
        (lambda: ErrorRate(threshold="0.5"), "threshold"),  # type: ignore[arg-type]
    ],
)
def test_bad_parameters_are_config_errors(make: Any, words: str) -> None:
    """A detector refuses parameters that could never work, naming the parameter."""
    with pytest.raises(ConfigError, match=words):
        make()


def test_error_rate_exempt_tools_neither_fail_nor_fill_the_window() -> None:
    """An exempt tool's failures are not counted, and its calls take no place in the window."""
    calls: list[Call] = [
        {"tool": "log", "args": {"i": 1}, "error": "disk full"},
        {"tool": "log", "args": {"i": 2}, "error": "disk full"},
        {"tool": "f", "args": {"i": 3}, "error": "x"},
        {"tool": "log", "args": {"i": 4}, "error": "disk full"},
        {"tool": "f", "args": {"i": 5}},
        {"tool": "f", "args": {"i": 6}, "error": "x"},
        {"tool": "f", "args": {"i": 7}, "error": "x"},
    ]
    found = trips(ErrorRate(window=4, threshold=0.5), actions(calls))
    assert found[3] is not None and found[3].evidence["failing"] == {"log": 3, "f": 1}
    exempt = trips(ErrorRate(window=4, threshold=0.5, exempt={"log"}), actions(calls))
    assert exempt[:6] == [None] * 6  # f's own calls fill the window only at the seventh action
    last = exempt[6]
    assert last is not None and last.evidence["failing"] == {"f": 3} and last.evidence["errors"] == 3


def test_the_message_names_the_worst_tool_to_avoid() -> None:
    """The tool that failed most leads the evidence, and the hint to avoid it names no count."""
    calls: list[Call] = [
        {"tool": "fetch", "args": {"u": 1}, "error": "503"},
        {"tool": "fetch", "args": {"u": 2}, "error": "503"},
        {"tool": "parse", "args": {"u": 3}, "error": "bad json"},
        {"tool": "read", "args": {"u": 4}},
    ]
    calls.append({"tool": "parse", "args": {"u": 5}, "error": "bad json"})
    calls.append({"tool": "fetch", "args": {"u": 6}, "error": "503"})
    anomaly = trips(ErrorRate(window=6, threshold=0.5), actions(calls))[-1]
    assert anomaly is not None
    assert anomaly.message.startswith("5 of 6 actions failed (83%), last: fetch: 503")
    assert list(anomaly.evidence["failing"]) == ["fetch", "parse"]
    assert anomaly.evidence["avoid"] == "fetch calls that keep failing"


def test_complaints_about_malformed_turns_between_good_turns_are_no_error_rate() -> None:
    """A model that now and then answers without a command between good turns fails no tool; a
    tool failing the same way between the same turns does."""
    work: list[Call] = [
        {"tool": "python", "args": {"cmd": f"python probe_{n}.py"}, "output": f"result {n}"} for n in range(6)
    ]
    mixed = [call for pair in zip(work, [REJECTED_TURN] * 6, strict=True) for call in pair]
    assert trips(ErrorRate(), actions(mixed)) == [None] * 12
    failing: Call = {
        "tool": "pytest",
        "args": {"cmd": "pytest"},
        "output": "1 failed",
        "error": "returncode 1",
    }
    stuck = [call for pair in zip(work, [failing] * 6, strict=True) for call in pair]
    assert trips(ErrorRate(), actions(stuck))[-1] is not None
