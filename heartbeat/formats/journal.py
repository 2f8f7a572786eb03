"""The project's own ``state/journal.jsonl``: its ``action`` events, in order.

The journal keeps a call's summary, its output length and its error, not
the output text; the summary stands in for the arguments, so exact and
near repeats, loops and error patterns replay, output-aware detectors see
only lengths. A heartbeat's ``spend`` event (tokens and dollars by model)
is its spend again.
"""

from __future__ import annotations

from typing import Any

from .common import Action, ModelUsage, action, attach_usage, usage_of

NAME = "journal"


def sniff(data: Any) -> bool:
    """JSON Lines whose objects carry an ``event`` field."""
    return (
        isinstance(data, list) and bool(data) and all(isinstance(r, dict) and "event" in r for r in data[:5])
    )


def actions(data: Any) -> list[Action]:
    """One action per ``action`` event; a ``spend`` event's models with its heartbeat's first action."""
    found: list[Action] = []
    marks: list[tuple[int, ModelUsage]] = []
    first: dict[object, int] = {}  # tick -> index of its first action
    for row in data:
        if row.get("event") == "spend" and isinstance(row.get("models"), dict):
            at = first.get(row.get("tick"), len(found))
            for model, used in row["models"].items():
                spent = _spent(str(model), used)
                if spent is not None:
                    marks.append((at, spent))
            continue
        if row.get("event") != "action":
            continue
        first.setdefault(row.get("tick"), len(found))
        summary = str(row.get("summary") or row.get("tool") or "")
        length = row.get("output_len")
        output = None if length is None else "x" * int(length)
        found.append(action(str(row.get("tool") or "(unknown)"), {"call": summary}, output, row.get("error")))
    return attach_usage(found, marks)


def _spent(model: str, used: object) -> ModelUsage | None:
    """One model's line of a ``spend`` event as usage; its dollars kept when every call was priced."""
    if not isinstance(used, dict):
        return None
    raw = {
        "input_tokens": used.get("input"),
        "output_tokens": used.get("output"),
        "cached_input_tokens": used.get("cached"),
    }
    spent = usage_of(raw, model)
    if spent is not None and not used.get("unpriced"):
        spent["cost"] = used.get("cost")
    return spent
