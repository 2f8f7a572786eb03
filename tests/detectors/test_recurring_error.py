"""``recurring_error``: the same error again and again, told apart from different errors."""

from __future__ import annotations

from typing import Any

from heartbeat.detectors import RecurringError

from .helpers import Call, actions, first


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
