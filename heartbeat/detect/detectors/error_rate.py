"""``error_rate``: many of the last W actions failed, and the failures repeat.

A debugging agent's reproduction script crashes on purpose, differently
after each edit: many failures that all differ are work, not a stuck agent.
So the rate counts only when the failures in the window are at most half as
many distinct failures (:func:`~.recurring_error.failure_key`: tool, masked
error text and result) as there are failures, i.e. each was seen twice on
average: a handful of attempts failing in turn, none of them often enough
for ``recurring_error``. A failed call without arguments (a harness's
complaint about a malformed turn, between good turns) attempted nothing and
is no failure here: a run that keeps working while its model now and then
answers without a command is not failing its tools.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Collection, Hashable, Mapping
from dataclasses import dataclass, field
from datetime import datetime

from ...base.errors import ConfigError
from ...core.models import Anomaly, clip
from .contract import (
    ActionTracker,
    ActionView,
    History,
    StepTracker,
    Windowed,
    attempted_nothing,
    frozen_names,
    make_anomaly,
    need_int,
    tail_of,
)
from .failures import failure_key
from .window import ErrorsOnly, SparseWindow

__all__ = ["ErrorRate", "ErrorRateTracker"]


@dataclass(frozen=True)
class ErrorRate(Windowed):
    """``error_rate``: errors / W >= T over the last W actions, once W exist, with the failures repeating."""

    window: int = 10
    threshold: float = 0.5
    exempt: Collection[str] = frozenset()
    kind: str = field(default="error_rate", init=False, repr=False)

    def __post_init__(self) -> None:
        need_int("error_rate", "window", self.window)
        t = self.threshold
        if isinstance(t, bool) or not isinstance(t, int | float) or not 0 < t <= 1:
            raise ConfigError(f"error_rate: threshold must be a number in (0, 1], got {t!r}")
        object.__setattr__(self, "exempt", frozen_names(self.exempt))

    @property
    def history_needed(self) -> int:
        """Past actions this detector needs to see."""
        return self.window

    def check(self, history: History, now: datetime) -> Anomaly | None:
        """Whether the newest action failed and brought the failure rate to T or more."""
        last = history.last
        if last is None or last.tool in self.exempt or last.error is None or attempted_nothing(last):
            return None
        seq = [a for a in history.actions if a.tool not in self.exempt][-self.window :]
        if len(seq) < self.window:
            return None
        failures = Counter(
            (a.tool, failure_key(a)) for a in seq if a.error is not None and not attempted_nothing(a)
        )
        if not self._trips(failures):
            return None
        return self._report(last, failures, history.tick, now)

    def tracker(self, history: History) -> ActionTracker:
        """An incremental ``check`` seeded from ``history``."""
        return ErrorRateTracker(self, history)

    def _trips(self, failures: Mapping[tuple[str, Hashable], int]) -> bool:
        """Whether ``failures`` (counts per tool and failure) are many, and repeating."""
        errors = sum(failures.values())
        # The rate as a quotient, never errors >= T * W: 0.3 * 10 is 3.0000000000000004.
        return errors / self.window >= self.threshold and 2 * len(failures) <= errors

    def _report(
        self, action: ActionView, failures: Mapping[tuple[str, Hashable], int], tick: int, at: datetime
    ) -> Anomaly:
        failing: Counter[str] = Counter()
        for (tool, _), n in failures.items():
            failing[tool] += n
        errors = sum(failing.values())
        rate = errors / self.window
        tools = sorted(failing, key=lambda t: (-failing[t], t))
        worst = tools[0]
        return make_anomaly(
            "error_rate",
            f"{errors} of {self.window} actions failed ({rate:.0%}), "
            f"last: {action.tool}: {clip(action.error, 120)}; "
            f"{len(failures)} different failure(s) among them",
            tick=tick,
            at=at,
            action=action,
            evidence={
                "errors": errors,
                "window": self.window,
                "rate": round(rate, 4),
                "threshold": self.threshold,
                "last_error": action.error,
                "failing": {t: failing[t] for t in tools},
                "distinct": len(failures),
                # Stable across heartbeats (no counts in it): the policy compares it with the last one.
                # recurring_error's words: the same tool failing the same way after this advice
                # is the agent doing again what it was told to avoid.
                "avoid": f"{worst} calls that keep failing",
            },
        )


class ErrorRateTracker(ErrorsOnly, StepTracker):
    """The errors among the last W actions (position and tool), with counts per tool.

    Only errors are kept: a success moves the position on and, at most, lets
    the oldest error leave the window, so the common push does almost nothing.
    """

    __slots__ = ("_det", "_errors", "_exempt", "_window")

    def __init__(self, det: ErrorRate, history: History) -> None:
        self._det = det
        self._exempt = det.exempt
        self._window = det.window
        # Positions are the actions seen (exempt ones left out); the key is the tool and its failure.
        self._errors: SparseWindow[tuple[str, Hashable]] = SparseWindow(det.window)
        self.seed(tail_of(history.actions, det.window, det.exempt))

    def step(
        self,
        action: ActionView,
        tool: str,
        fp: str,
        length: int | None,
        error: str | None,
        report: bool,
    ) -> Anomaly | None:
        """:meth:`push` with the action's fields already read (see :data:`BuiltinStep`)."""
        if tool in self._exempt:
            return None
        errors = self._errors
        errors.advance(action.index)
        if error is None or attempted_nothing(action):
            return None
        errors.add((tool, failure_key(action)))
        if not report or errors.position < self._window or not self._det._trips(errors.counts):
            return None
        return self._det._report(action, errors.counts, action.tick, action.at)
