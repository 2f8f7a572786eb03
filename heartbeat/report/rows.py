"""The actions table's rows: which actions a page embeds, and which of them repeat or cycle.

Pure, like :mod:`heartbeat.report.data` that calls it. Two calls are "the
same" when their summaries are (tool and canonical arguments, volatile
arguments already dropped by the recorder), the closest the journal comes to
the detectors' fingerprints.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

__all__ = ["ActionRow", "action_rows", "event_tick", "json_or_text", "mark_repeats"]

MAX_ROWS = 2000
"""Action rows embedded in a page at most (the stretch first, then the newest)."""
MAX_STRETCH_ROWS = 1000
"""Action rows of the selected stretch at most (its newest)."""
CYCLE_PERIODS = range(2, 11)
"""Cycle lengths the actions table looks for (a loop of 2 to 10 different calls)."""
_CONTEXT = 2 * CYCLE_PERIODS.stop
"""Actions before the embedded ones that the repeat and cycle marks look back over."""


@dataclass(slots=True)
class ActionRow:
    """One recorded action as the table shows it, with what makes it suspicious."""

    index: int
    tick: int
    at: str
    tool: str
    args: str
    output_len: int | None
    error: str | None
    cost: float
    key: str
    repeat: int = 0
    """The length of the run of identical calls it is part of (0 when it stands alone)."""
    cycle: int = 0
    """The period of the back-to-back cycle this call is part of, else 0."""
    tripped: list[str] = field(default_factory=list)
    """The anomaly kinds this action tripped."""


def event_tick(event: Mapping[str, Any]) -> int:
    """An event's tick number (0 when absent or not an integer)."""
    tick = event.get("tick")
    return tick if isinstance(tick, int) and not isinstance(tick, bool) else 0


def action_rows(
    actions: list[Mapping[str, Any]],
    stretch: tuple[int, int] | None,
    tripped: Mapping[int, list[str]],
    redact: Callable[[str], str],
) -> tuple[list[ActionRow], int, int]:
    """The rows a page embeds: the stretch's (its newest, capped), then the newest others up to the cap.

    Also returns how many actions the stretch holds and how many of them were left out.
    """
    chosen: set[int] = set()
    in_stretch = 0
    if stretch is not None:
        first, last = stretch
        positions = [i for i, a in enumerate(actions) if first <= event_tick(a) <= last]
        in_stretch = len(positions)
        chosen.update(positions[-MAX_STRETCH_ROWS:])
    dropped = in_stretch - len(chosen)
    position = len(actions) - 1
    while position >= 0 and len(chosen) < MAX_ROWS:
        chosen.add(position)
        position -= 1
    ordered = sorted(chosen)
    rows: list[ActionRow] = []
    block: list[int] = []
    for position in ordered:
        if block and position != block[-1] + 1:
            rows += _block(block, actions, tripped, redact)
            block = []
        block.append(position)
    if block:
        rows += _block(block, actions, tripped, redact)
    return rows, in_stretch, dropped


def _block(
    positions: list[int],
    actions: list[Mapping[str, Any]],
    tripped: Mapping[int, list[str]],
    redact: Callable[[str], str],
) -> list[ActionRow]:
    """Rows of consecutive actions, their repeats and cycles marked with the actions before as context."""
    block = [_row(actions[p], p, tripped, redact) for p in positions]
    context = [_key(a) for a in actions[max(0, positions[0] - _CONTEXT) : positions[0]]]
    repeat, cycle = mark_repeats([*context, *(row.key for row in block)])
    for i, row in enumerate(block, start=len(context)):
        row.repeat, row.cycle = repeat[i], cycle[i]
    return block


def _key(event: Mapping[str, Any]) -> str:
    """What makes two calls the same: the summary (tool and canonical arguments, volatile ones dropped)."""
    return str(event.get("summary") or event.get("tool") or "?")


def _row(
    event: Mapping[str, Any], position: int, tripped: Mapping[int, list[str]], redact: Callable[[str], str]
) -> ActionRow:
    """One action event as a table row (texts redacted)."""
    tool = str(event.get("tool") or "?")
    summary = str(event.get("summary") or tool)
    args = summary
    if args.startswith(tool + "("):  # "tool(args)", or cut at 200 characters and ending in "…"
        args = args[len(tool) + 1 :]
        args = json_or_text(args[:-1]) if args.endswith(")") else args
    index = event.get("index")
    index = index if isinstance(index, int) else position + 1
    output_len = event.get("output_len")
    error = event.get("error")
    cost = event.get("cost")
    return ActionRow(
        index=index,
        tick=event_tick(event),
        at=str(event.get("at") or ""),
        tool=redact(tool),
        args=redact(args),
        output_len=output_len if isinstance(output_len, int) else None,
        error=redact(str(error)) if error else None,
        cost=float(cost) if isinstance(cost, int | float) and not isinstance(cost, bool) else 0.0,
        key=_key(event),
        tripped=list(tripped.get(index, [])),
    )


def mark_repeats(keys: list[str]) -> tuple[list[int], list[int]]:
    """For each call: the length of its run of identical calls, and the period of a cycle it is in.

    A cycle of period p (2 to 10 calls, at least two of them different) is
    marked where the same p calls follow each other at least twice in a row;
    the smallest such period wins.
    """
    n = len(keys)
    repeat = [1] * n
    for i in range(1, n):
        if keys[i] == keys[i - 1]:
            repeat[i] = repeat[i - 1] + 1
    for i in range(n - 2, -1, -1):
        # Every call of a run gets the run's whole length, the first included.
        if keys[i] == keys[i + 1]:
            repeat[i] = repeat[i + 1]
    cycle = [0] * n
    for period in CYCLE_PERIODS:
        run = 0
        for i in range(period, n):
            run = run + 1 if keys[i] == keys[i - period] else 0
            if run >= period and len(set(keys[i - period + 1 : i + 1])) > 1:
                for j in range(i - 2 * period + 1, i + 1):
                    if not cycle[j]:
                        cycle[j] = period
    return [r if r > 1 else 0 for r in repeat], cycle


def json_or_text(text: str) -> str:
    """Arguments shown compactly: JSON re-spaced for reading, anything else as it is."""
    with contextlib.suppress(ValueError, RecursionError):
        return json.dumps(json.loads(text), ensure_ascii=False, separators=(", ", ": "))
    return text
