"""``error_rate``: the share of failed actions over the last W actions."""

from __future__ import annotations

from typing import Any

import pytest

from heartbeat.detectors import ErrorRate
from heartbeat.errors import ConfigError

from .helpers import Call, actions, trips


def test_three_errors_in_a_window_of_four_trip_error_rate_at_75_percent() -> None:
    """3 failures in the last 4 actions is 75%, over a threshold of 0.5."""
    calls: list[Call] = [
        {"tool": "fetch", "args": {"u": 1}, "error": "503"},
        {"tool": "fetch", "args": {"u": 2}},
        {"tool": "fetch", "args": {"u": 3}, "error": "503"},
        {"tool": "fetch", "args": {"u": 4}, "error": "503 Service Unavailable"},
    ]
    found = trips(ErrorRate(window=4, threshold=0.5), actions(calls))
    assert found[:3] == [None] * 3
    anomaly = found[3]
    assert anomaly is not None
    assert anomaly.message.startswith("3 of 4 actions failed (75%), last: fetch: 503")
    assert anomaly.evidence["rate"] == 0.75 and anomaly.evidence["failing"] == {"fetch": 3}


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
    ],
)
def test_bad_parameters_are_config_errors(make: Any, words: str) -> None:
    """A detector refuses parameters that could never work, naming the parameter."""
    with pytest.raises(ConfigError, match=words):
        make()
