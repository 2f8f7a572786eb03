"""``cycle``: long, noisy cycles and wandering: the window keeps returning to what it has seen.

A strict ``loop`` needs the same cycle twice back to back. Real agents go
round cycles of 10-20 steps, insert an odd step (a note whose text changes
every time), or wander back to places and observations they have already
seen. Each action's key is its masked call plus its result (the exact
call when the result is at most 10 characters); an action is a
*revisit* when its key occurred earlier in the last W actions. Fires when
at least N of the last W actions are revisits spread over at least two
different calls (one call again and again is ``recurring`` or ``repeat``).
"""

from __future__ import annotations

from collections.abc import Collection, Hashable
from dataclasses import dataclass, field
from datetime import datetime

from ...core.models import Anomaly
from .contract import (
    ActionTracker,
    ActionView,
    History,
    StepTracker,
    frozen_names,
    make_anomaly,
    need_int,
    tail_of,
)
from .window import KeyWindow

__all__ = ["Cycle", "CycleTracker"]


def _key(action: ActionView) -> Hashable:
    # A short or empty answer cannot tell two pages or two edits apart: the exact call then.
    length = action.output_len
    if length is not None and length > _SHORT:
        return (action.shape, action.result)
    return (action.fingerprint, action.result)


_SHORT = 10  # characters: what recurring's min_chars and empty's max_chars default to


@dataclass(frozen=True)
class Cycle:
    """``cycle``: N of the last W actions revisit a call+result seen earlier in the window."""

    threshold: int = 10
    window: int = 30
    exempt: Collection[str] = frozenset()
    kind: str = field(default="cycle", init=False, repr=False)

    def __post_init__(self) -> None:
        need_int("cycle", "threshold", self.threshold)
        need_int("cycle", "window", self.window, self.threshold + 1)
        object.__setattr__(self, "exempt", frozen_names(self.exempt))

    @property
    def history_needed(self) -> int:
        """Past actions this detector needs to see."""
        return self.window

    def check(self, history: History, now: datetime) -> Anomaly | None:
        """Whether the newest action is a revisit that brings the window's revisits to N."""
        last = history.last
        if last is None or last.tool in self.exempt:
            return None
        seq = [a for a in history.actions if a.tool not in self.exempt][-self.window :]
        counts: dict[Hashable, int] = {}
        for action in seq:
            key = _key(action)
            counts[key] = counts.get(key, 0) + 1
        revisits = len(seq) - len(counts)
        repeated = sum(1 for n in counts.values() if n > 1)
        if counts[_key(last)] < 2 or revisits < self.threshold or repeated < 2:
            return None
        return self._report(last, revisits, repeated, len(seq), history.tick, now)

    def tracker(self, history: History) -> ActionTracker:
        """An incremental ``check`` seeded from ``history``."""
        return CycleTracker(self, history)

    def _report(
        self, action: ActionView, revisits: int, repeated: int, span: int, tick: int, at: datetime
    ) -> Anomaly:
        return make_anomaly(
            "cycle",
            f"{revisits} of the last {span} actions went back to a call and result already seen "
            f"({repeated} different ones, not back to back): going round in circles; last: {action.summary}",
            tick=tick,
            at=at,
            action=action,
            evidence={
                "revisits": revisits,
                "distinct": repeated,
                "window": self.window,
                "threshold": self.threshold,
                "call": action.summary,
                # One hint for the whole cycle (the policy compares it with the last one): a
                # cycle found again in the next stuck heartbeat is the agent still going round.
                "avoid": "going back to calls whose results you have already seen",
            },
        )


class CycleTracker(StepTracker):
    """A key window of masked call+result keys, counting revisits."""

    __slots__ = ("_det", "_exempt", "_keys")

    def __init__(self, det: Cycle, history: History) -> None:
        self._det = det
        self._exempt = det.exempt
        self._keys = KeyWindow(det.window)
        for action in tail_of(history.actions, det.window, det.exempt):
            self._keys.push(_key(action))

    def step(
        self, action: ActionView, tool: str, fp: str, length: int | None, error: str | None, report: bool
    ) -> Anomaly | None:
        """:meth:`push` with the action's fields already read (see ``BuiltinStep``)."""
        if tool in self._exempt:
            return None
        keys = self._keys
        count = keys.push(_key(action))
        if not report or count < 2 or keys.revisits < self._det.threshold or keys.repeated < 2:
            return None
        return self._det._report(action, keys.revisits, keys.repeated, len(keys), action.tick, action.at)
