"""``empty``: a tool that used to answer returns empty or near-empty outputs, N times in a row.

Silent by design is normal: ``sed -i``, a heredoc write, ``rm``, a ``think``
tool that always returns nothing, a calculator's ``300.0``, a flight
status ``available``. So a short output counts only from a call of a shape
(see :mod:`.fingerprints`: the call with its digits left out) that has
answered with more than C characters before in the kept history: a call
that went quiet. ``sed -n '1,20p' f`` answering says nothing about
``sed -i ...``; a poll or a paged read that used to answer and now
returns nothing does count. Short outputs of shapes that never answered
at length are skipped (they neither count nor break a run); a failed
action is left to the error detectors.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Sequence
from dataclasses import dataclass, field
from datetime import datetime

from ...core.models import Anomaly
from .contract import ActionTracker, ActionView, History, StepTracker, frozen_names, make_anomaly, need_int

__all__ = ["Empty", "EmptyTracker"]


@dataclass(frozen=True)
class Empty:
    """``empty``: N short outputs in a row from calls whose shape answered at length before."""

    threshold: int = 3
    max_chars: int = 10
    exempt: Collection[str] = frozenset()
    kind: str = field(default="empty", init=False, repr=False)

    def __post_init__(self) -> None:
        need_int("empty", "threshold", self.threshold)
        need_int("empty", "max_chars", self.max_chars)
        object.__setattr__(self, "exempt", frozen_names(self.exempt))

    @property
    def history_needed(self) -> int:
        """Past actions this detector needs to see."""
        return self.threshold

    def check(self, history: History, now: datetime) -> Anomaly | None:
        """Whether the newest action's short output completes a run of N."""
        last = history.last
        if last is None:
            return None
        state = _Run(self)
        for action in history.actions[:-1]:
            state.step(action.tool, action.shape, action.output_len, action.error)
        if not state.step(last.tool, last.shape, last.output_len, last.error):
            return None
        return self._report(last, state.run, history.tick, now) if state.run >= self.threshold else None

    def tracker(self, history: History) -> ActionTracker:
        """An incremental ``check`` seeded from ``history``."""
        return EmptyTracker(self, history.actions)

    def _report(self, action: ActionView, run: int, tick: int, at: datetime) -> Anomaly:
        what = "empty" if self.max_chars == 0 else f"empty or at most {self.max_chars} characters"
        return make_anomaly(
            "empty",
            f"{run} outputs in a row were {what}, from calls that answered at length before; "
            f"last: {action.summary}",
            tick=tick,
            at=at,
            action=action,
            evidence={
                "count": run,
                "threshold": self.threshold,
                "max_chars": self.max_chars,
                "last": action.summary,
                "avoid": action.summary,
            },
        )


class _Run:
    """The call shapes that answered at length, and the current run of short answers from them."""

    __slots__ = ("answering", "exempt", "max_chars", "run", "seen", "since")

    def __init__(self, det: Empty) -> None:
        self.exempt = det.exempt
        self.max_chars = det.max_chars
        # Each shape that answered at length, by the position of its last such answer, oldest first.
        self.answering: dict[str, int] = {}
        self.run = 0
        self.seen = 0  # actions taken: the position of the newest
        self.since = 0  # the oldest of the long answers the run's short ones count on

    def step(self, tool: str, shape: str | None, length: int | None, error: str | None) -> bool:
        """Take one action; True when it extended the run."""
        seen = self.seen = self.seen + 1
        if length is None or error is not None or tool in self.exempt:
            return False
        key = shape if shape is not None else tool  # a state saved before shapes: by tool
        if length > self.max_chars:
            answering = self.answering
            answering.pop(key, None)  # to the end: the order stays that of the last long answers
            answering[key] = seen
            self.run = 0
            return False
        answered = self.answering.get(key)
        if answered is None:
            return False  # silent by design, as far as we know
        if not self.run or answered < self.since:
            self.since = answered
        self.run += 1
        return True

    def slide(self, kept: int) -> bool:
        """Forget all but the last ``kept`` actions, as if seeded from those; False when it cannot.

        Shapes whose last long answer is older are dropped. A run that counts
        on one of them would not have been counted from the kept actions alone.
        """
        oldest = self.seen - kept + 1
        if self.run and self.since < oldest:
            return False
        answering = self.answering
        while answering:
            key = next(iter(answering))  # the oldest long answer
            if answering[key] >= oldest:
                break
            del answering[key]
        return True


class EmptyTracker(StepTracker):
    """:class:`_Run` fed action by action."""

    __slots__ = ("_det", "_run")

    def __init__(self, det: Empty, actions: Iterable[ActionView]) -> None:
        self._det = det
        self._run = _Run(det)
        for action in actions:
            self._run.step(action.tool, action.shape, action.output_len, action.error)

    def step(
        self, action: ActionView, tool: str, fp: str, length: int | None, error: str | None, report: bool
    ) -> Anomaly | None:
        """:meth:`push` with the action's fields already read (see ``BuiltinStep``)."""
        if length is None or error is not None:  # nothing to count, nothing to break
            self._run.seen += 1
            return None
        if not self._run.step(tool, action.shape, length, error):
            return None
        run = self._run.run
        if not report or run < self._det.threshold:
            return None
        return self._det._report(action, run, action.tick, action.at)

    def slide(self, kept: Sequence[ActionView]) -> bool:
        """Become what a tracker seeded from ``kept``, the end of what it took, would be; False: it cannot."""
        return self._run.slide(len(kept))
