"""The project's own ``state/journal.jsonl``: its heartbeats, as the live run had them.

A heartbeat is a tick whose step ran: its ``action`` events, closed by its
``decision`` event, with the progress sample its ``tick`` event carries
(:func:`ticks`). Ticks that ran no step (waiting for a human, paused,
stopped by KILL) are no heartbeat, as they were none live; a ``resume``
event marks the next heartbeat as the first after a human's ``heartbeat
resume``. Each action event since detection v3 keeps the keys the detectors
computed live (``fingerprint``, ``shape``, ``result``: digests, never the
arguments or the output); :func:`heartbeat.replay.trace.load_any` makes the
heartbeats trace lines that feed those keys to the detectors as they are.
An older journal's action has only its summary, output length and error:
its arguments are read back from the summary (:func:`summary_args`).
A heartbeat's ``spend`` event (tokens and dollars by model) is its spend again.
"""

from __future__ import annotations

import json
from typing import Any

from .common import Action, ModelUsage, action, attach_usage, usage_of

NAME = "journal"


def sniff(data: Any) -> bool:
    """JSON Lines whose objects carry an ``event`` field."""
    return (
        isinstance(data, list) and bool(data) and all(isinstance(r, dict) and "event" in r for r in data[:5])
    )


def summary_args(tool: str, summary: str) -> dict[str, Any]:
    """The arguments a journal's summary shows (``tool({...})``), else ``{"call": summary}`` (a cut one)."""
    if summary == f"{tool}()":
        return {}
    if summary.startswith(f"{tool}(") and summary.endswith(")"):
        try:
            args = json.loads(summary[len(tool) + 1 : -1])
        except ValueError:
            args = None
        if isinstance(args, dict):
            return args
    return {"call": summary}


def ticks(data: Any) -> list[dict[str, Any]]:
    """One heartbeat per tick whose step ran: ``at``, ``progress`` and its ``baseline``, ``resumed``,
    ``turn``, ``heard``, its action events and ``usage`` (its ``spend`` event's models, as
    :class:`~heartbeat.formats.common.ModelUsage`)."""
    beats: list[dict[str, Any]] = []
    pending: dict[Any, list[dict[str, Any]]] = {}  # action events by tick, until their decision
    spent: dict[Any, list[ModelUsage]] = {}  # a tick's spend event comes before its decision
    resumed = False
    waiting: tuple[Any, dict[str, Any]] | None = None  # the heartbeat whose tick event has its progress
    for row in data:
        if not isinstance(row, dict):
            continue
        kind, tick = row.get("event"), row.get("tick")
        if kind == "action":
            pending.setdefault(tick, []).append(row)
        elif kind == "spend":
            spent.setdefault(tick, []).extend(spend_usage(row))
        elif kind == "decision":
            actions = pending.pop(tick, [])
            at = actions[0].get("at") if actions else None
            beat = {"at": at or row.get("at"), "progress": None, "baseline": None, "resumed": resumed}
            beat["actions"] = actions
            beat["turn"], beat["heard"] = False, True
            beat["usage"] = spent.pop(tick, [])
            beats.append(beat)
            resumed, waiting = False, (tick, beat)
        elif kind == "tick" and waiting is not None and waiting[0] == tick:
            progress = row.get("progress")
            baseline = row.get("baseline")
            if isinstance(progress, int | float) and not isinstance(progress, bool):
                waiting[1]["progress"] = float(progress)
                if isinstance(baseline, int | float) and not isinstance(baseline, bool):
                    waiting[1]["baseline"] = float(baseline)
            waiting[1]["turn"] = row.get("turn") is True
            waiting[1]["heard"] = row.get("heard") is not False
            waiting = None
        elif kind == "resume":
            resumed = True
    return beats


def actions(data: Any) -> list[Action]:
    """One action per ``action`` event; a ``spend`` event's models with its heartbeat's first action."""
    found: list[Action] = []
    marks: list[tuple[int, ModelUsage]] = []
    first: dict[object, int] = {}  # tick -> index of its first action
    for row in data:
        if row.get("event") == "spend":
            at = first.get(row.get("tick"), len(found))
            marks += [(at, used) for used in spend_usage(row)]
            continue
        if row.get("event") != "action":
            continue
        first.setdefault(row.get("tick"), len(found))
        tool = str(row.get("tool") or "(unknown)")
        found.append(
            action(tool, summary_args(tool, str(row.get("summary") or tool)), None, row.get("error"))
        )
    return attach_usage(found, marks)


def spend_usage(row: dict[str, Any]) -> list[ModelUsage]:
    """A ``spend`` event's models as usage, each with its dollars when every call was priced."""
    models = row.get("models")
    found: list[ModelUsage] = []
    for model, used in models.items() if isinstance(models, dict) else ():
        if not isinstance(used, dict):
            continue
        raw = {
            "input_tokens": used.get("input"),
            "output_tokens": used.get("output"),
            "cached_input_tokens": used.get("cached"),
        }
        spent = usage_of(raw, str(model))
        if spent is not None:
            if not used.get("unpriced"):
                spent["cost"] = used.get("cost")
            calls = used.get("calls")
            if isinstance(calls, int) and not isinstance(calls, bool) and calls > 1:
                spent["calls"] = calls
            found.append(spent)
    return found
