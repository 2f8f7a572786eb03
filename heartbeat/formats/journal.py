"""The project's own ``state/journal.jsonl``: its ``action`` events, in order.

The journal keeps a call's summary, its output length and its error, not
the output text; the summary stands in for the arguments, so exact and
near repeats, loops and error patterns replay, output-aware detectors see
only lengths.
"""

from __future__ import annotations

from typing import Any

from .common import Action, action

NAME = "journal"


def sniff(data: Any) -> bool:
    """JSON Lines whose objects carry an ``event`` field."""
    return (
        isinstance(data, list) and bool(data) and all(isinstance(r, dict) and "event" in r for r in data[:5])
    )


def actions(data: Any) -> list[Action]:
    """One action per ``action`` event."""
    found: list[Action] = []
    for row in data:
        if row.get("event") != "action":
            continue
        summary = str(row.get("summary") or row.get("tool") or "")
        length = row.get("output_len")
        output = None if length is None else "x" * int(length)
        found.append(action(str(row.get("tool") or "(unknown)"), {"call": summary}, output, row.get("error")))
    return found
