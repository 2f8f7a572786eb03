"""The project's own ``state/journal.jsonl``: its heartbeats, as the live run had them.

A heartbeat is a tick whose step ran: its ``action`` events, closed by its
``decision`` event, with the progress sample its ``tick`` event carries.
Ticks that ran no step (waiting for a human, paused, stopped by KILL) are no
heartbeat, as they were none live; a ``resume`` event marks the next
heartbeat as the first after a human's ``heartbeat resume`` (the streak, the
recovery and the progress samples start afresh, and replay goes on past an
escalation). The rotated files (``journal.jsonl.1``, ...) are read first.

Each action event since detection v3 keeps the keys the detectors computed
live (``fingerprint``, ``shape``, ``result``: digests, never the arguments
or the output; see :func:`heartbeat.monitor.journal_keys`), and replay feeds
them to the detectors as they are. An older journal's action has only its
summary, output length and error: its arguments are read back from the
summary (unless it was cut at 200 characters), and its output, unknown, never
counts as the same result as another.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from .common import Action, action

NAME = "journal"


def sniff(data: Any) -> bool:
    """JSON Lines whose objects carry an ``event`` field."""
    return (
        isinstance(data, list) and bool(data) and all(isinstance(r, dict) and "event" in r for r in data[:5])
    )


def read_events(path: Path) -> list[dict[str, Any]]:
    """Every event of the journal at ``path``, its rotated files first; unreadable lines skipped."""
    from ..journal import Journal

    return list(Journal(path).read())


def _args(tool: str, summary: str) -> dict[str, Any]:
    """The arguments an older journal's summary shows (``tool({...})``), else ``{"call": summary}``."""
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


def _keyed(row: dict[str, Any], number: int) -> Any:
    """One action event as a :class:`~heartbeat.trace.KeyedAction` (the detectors' keys)."""
    from ..detectors import prints
    from ..recorded import KEY_FIELDS
    from ..trace import KeyedAction

    tool = str(row.get("tool") or "(unknown)")
    summary = str(row.get("summary") or tool)
    error = row.get("error") or None
    length = row.get("output_len")
    if "fingerprint" in row:
        keys = {name: row.get(name) for name in KEY_FIELDS}
    else:  # an older journal: the keys computed again from what it shows
        found = prints(tool, _args(tool, summary), None, None if error is None else str(error))
        keys = {name: getattr(found, name, None) for name in KEY_FIELDS}
        keys["fingerprint"] = found.fingerprint
        if error is None and length is not None:
            keys["result"] = f"?{number}"  # an output it did not keep: the same as no other
    keys.update(summary=summary, output_len=length)
    cost = row.get("cost")
    return KeyedAction(
        tool=tool,
        error=None if error is None else str(error),
        cost=float(cost) if isinstance(cost, int | float) and not isinstance(cost, bool) else 0.0,
        keys=keys,
    )


def ticks(data: Any) -> list[Any]:
    """One :class:`~heartbeat.trace.TraceLine` per heartbeat the journal records, in order."""
    from ..trace import ResumedLine, TraceLine

    lines: list[TraceLine] = []
    pending: dict[Any, list[Any]] = {}  # actions by tick, until their decision
    times: dict[Any, Any] = {}
    resumed = False
    waiting: tuple[Any, TraceLine] | None = None  # the heartbeat whose tick event gives its progress
    number = 0
    for row in data:
        if not isinstance(row, dict):
            continue
        kind, tick = row.get("event"), row.get("tick")
        if kind == "action":
            number += 1
            pending.setdefault(tick, []).append(_keyed(row, number))
            times.setdefault(tick, row.get("at"))
        elif kind == "decision":
            kind_of_line = ResumedLine if resumed else TraceLine
            line = kind_of_line(actions=pending.pop(tick, []), at=times.pop(tick, None) or row.get("at"))
            resumed = False
            lines.append(line)
            waiting = (tick, line)
        elif kind == "tick" and waiting is not None and waiting[0] == tick:
            progress = row.get("progress")
            if isinstance(progress, int | float) and not isinstance(progress, bool):
                waiting[1].progress = float(progress)
            waiting = None
        elif kind == "resume":
            resumed = True
    return lines


def actions(data: Any) -> list[Action]:
    """One action per ``action`` event (what ``--format journal`` reads without its heartbeats)."""
    found: list[Action] = []
    for row in data:
        if row.get("event") != "action":
            continue
        tool = str(row.get("tool") or "(unknown)")
        summary = str(row.get("summary") or tool)
        found.append(action(tool, _args(tool, summary), None, row.get("error")))
    return found
