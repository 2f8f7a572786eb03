"""``recurring_error``: the same error again and again, told apart from different errors.

An error's fingerprint is the tool, the error label and the action's
result key (the end of its output, digits left out; see
:mod:`.fingerprints`); for an output of at most 10 characters (a bare
exit code) the exact call instead. Different errors while debugging are
progress; the same rejection coming back, whatever the arguments (a
different invalid option clicked each time, a retry with reshuffled
arguments, a rerun of the same failing test), is not.
"""

from __future__ import annotations

from collections.abc import Collection, Hashable
from dataclasses import dataclass, field
from datetime import datetime

from ...core.models import Anomaly, clip
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
from .window import ErrorsOnly, SparseWindow

__all__ = ["RecurringError", "RecurringErrorTracker"]


_SHORT = 10  # characters: an output this short (a bare exit code) cannot tell two errors apart


def _key(action: ActionView) -> Hashable:
    if action.error is None:
        return None
    length = action.output_len
    if length is not None and length <= _SHORT:
        # "grep" without a match, exit 1 and no output: only the same call counts as the same.
        return (action.tool, action.error, action.fingerprint)
    return (action.tool, action.error, action.result)


@dataclass(frozen=True)
class RecurringError:
    """``recurring_error``: the newest error's fingerprint occurs N times in the last W actions."""

    threshold: int = 3
    window: int = 10
    exempt: Collection[str] = frozenset()
    kind: str = field(default="recurring_error", init=False, repr=False)

    def __post_init__(self) -> None:
        need_int("recurring_error", "threshold", self.threshold)
        need_int("recurring_error", "window", self.window, self.threshold)
        object.__setattr__(self, "exempt", frozen_names(self.exempt))

    @property
    def history_needed(self) -> int:
        """Past actions this detector needs to see."""
        return self.window

    def check(self, history: History, now: datetime) -> Anomaly | None:
        """Whether the newest action failed with an error seen N times in the window."""
        last = history.last
        if last is None or last.tool in self.exempt or last.error is None:
            return None
        key = _key(last)
        seq = [a for a in history.actions if a.tool not in self.exempt][-self.window :]
        count = sum(1 for a in seq if _key(a) == key)
        return self._report(last, count, history.tick, now) if count >= self.threshold else None

    def tracker(self, history: History) -> ActionTracker:
        """An incremental ``check`` seeded from ``history``."""
        return RecurringErrorTracker(self, history)

    def _report(self, action: ActionView, count: int, tick: int, at: datetime) -> Anomaly:
        error = clip(action.error, 120)
        return make_anomaly(
            "recurring_error",
            f"{action.tool} failed with the same error {count} times in the last {self.window} actions "
            f"({error}); last: {action.summary}",
            tick=tick,
            at=at,
            action=action,
            evidence={
                "count": count,
                "window": self.window,
                "threshold": self.threshold,
                "error": action.error,
                "call": action.summary,
                "avoid": f"{action.tool} calls that keep failing",
            },
        )


class RecurringErrorTracker(ErrorsOnly, StepTracker):
    """The errors among the last W actions (position and key), with counts per key.

    Only errors are kept: a success moves the position on and, at most, lets
    the oldest error leave the window, so the common push does almost nothing.
    """

    __slots__ = ("_det", "_errors", "_exempt")

    def __init__(self, det: RecurringError, history: History) -> None:
        self._det = det
        self._exempt = det.exempt
        # Positions are the actions seen (exempt ones left out); the key is the error's fingerprint.
        self._errors: SparseWindow[Hashable] = SparseWindow(det.window)
        self.seed(tail_of(history.actions, det.window, det.exempt))

    def step(
        self, action: ActionView, tool: str, fp: str, length: int | None, error: str | None, report: bool
    ) -> Anomaly | None:
        """:meth:`push` with the action's fields already read (see ``BuiltinStep``)."""
        if tool in self._exempt:
            return None
        errors = self._errors
        errors.advance(action.index)
        if error is None:
            return None
        count = errors.add(_key(action))
        if not report or count < self._det.threshold:
            return None
        return self._det._report(action, count, action.tick, action.at)
