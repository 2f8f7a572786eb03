"""``no_progress``: the progress metric stays flat over the last N samples."""

from __future__ import annotations

import math
from collections import deque
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import datetime

from ...base.errors import ConfigError
from ...core.models import Anomaly, ProgressSample
from .calls import changes_something
from .contract import (
    ActionView,
    History,
    ProgressTracker,
    Scope,
    make_anomaly,
    need_int,
)

__all__ = ["ANEW_SHARE", "NoProgress", "NoProgressTracker", "novelty"]

ANEW_SHARE = 0.5
"""The share of a flat stretch's looks answered by something the run had not seen, above which its
calls "keep bringing new results" (``evidence["anew"]``, read by the policy's ``flat_grace``)."""


@dataclass(frozen=True)
class NoProgress:
    """``no_progress``: the last N progress samples differ by less than D (max - min).

    Samples whose metric failed (value None) are left out.
    """

    samples: int = 4
    min_delta: float = 0.01
    kind: str = field(default="no_progress", init=False, repr=False)
    scope: Scope = field(default="progress", init=False, repr=False)

    def __post_init__(self) -> None:
        need_int("no_progress", "samples", self.samples)
        d = self.min_delta
        if isinstance(d, bool) or not isinstance(d, int | float) or not math.isfinite(d) or d < 0:
            raise ConfigError(f"no_progress: min_delta must be a finite number >= 0, got {d!r}")

    @property
    def history_needed(self) -> int:
        """Progress samples this detector needs to see."""
        return self.samples

    def check(self, history: History, now: datetime) -> Anomaly | None:
        """Whether the newest sample leaves the metric flat over the last N samples."""
        if not history.progress or history.progress[-1].value is None:
            return None
        values = [s.value for s in history.progress if s.value is not None][-self.samples :]
        if len(values) < self.samples or max(values) - min(values) >= self.min_delta:
            return None
        return self._report(values, history.tick, now)

    def tracker(self, history: History) -> ProgressTracker:
        """An incremental ``check`` seeded from ``history``."""
        return NoProgressTracker(self, history)

    def _report(self, values: Sequence[float], tick: int, at: datetime) -> Anomaly:
        low, high = min(values), max(values)
        delta = high - low
        last = values[-1]
        n = len(values)
        if delta == 0:
            message = f"progress stayed at {last:g} for the last {n} heartbeats"
        else:
            message = (
                f"progress moved only {delta:g} over the last {n} heartbeats "
                f"(between {low:g} and {high:g}, now {last:g})"
            )
        return make_anomaly(
            "no_progress",
            f"{message}; it must move by at least {self.min_delta:g}",
            tick=tick,
            at=at,
            action=None,
            evidence={
                "samples": n,
                "value": last,
                "min": low,
                "max": high,
                "delta": delta,
                "min_delta": self.min_delta,
            },
        )


class NoProgressTracker:
    """The last N measured values."""

    __slots__ = ("_det", "_values")

    def __init__(self, det: NoProgress, history: History) -> None:
        self._det = det
        # The last N measured values, found from the newest end.
        values: list[float] = []
        for sample in reversed(history.progress):
            if sample.value is not None:
                values.append(sample.value)
                if len(values) == det.samples:
                    break
        values.reverse()
        self._values: deque[float] = deque(values, maxlen=det.samples)

    def push(self, sample: ProgressSample, report: bool = True) -> Anomaly | None:
        """Take the next sample; a ``no_progress`` anomaly when the metric is flat."""
        if sample.value is None:
            return None
        values = self._values
        values.append(sample.value)
        if not report or len(values) < self._det.samples:
            return None
        if max(values) - min(values) >= self._det.min_delta:
            return None
        return self._det._report(self._values, sample.tick, sample.at)

    def slide(self, kept: Sequence[ProgressSample]) -> bool:
        """Become what a tracker seeded from ``kept``, the end of what it took, would be (always can).

        It holds the last measured values it took; seeded from ``kept`` it
        would hold no more of them than ``kept`` measured.
        """
        values = self._values
        if values:
            measured = len(kept) - [sample.value for sample in kept].count(None)
            while len(values) > measured:
                values.popleft()
        return True


def novelty(
    detector: object, found: Anomaly, kept: Iterable[ActionView], progress: Sequence[ProgressSample]
) -> Anomaly:
    """``found`` with ``evidence["anew"]``, when ``detector`` is ``no_progress``: whether the looks
    after the first of its flat samples (calls that neither write, act nor wait) answered, more than
    :data:`ANEW_SHARE` of them, something the run had not seen: a test failing differently after each
    edit, a file not read before, from more than one call (numbers masked: a countdown read again
    each wake-up answers anew from one). Acts are left out, their answers report the act: a wanderer
    swapping a word for a synonym each heartbeat is told "replaced 'fast' with 'quick'" anew."""
    if not isinstance(detector, NoProgress):
        return found
    measured = [sample.tick for sample in progress if sample.value is not None][-detector.samples :]
    if not measured:
        return found
    seen: set[str | None] = {None}  # a look that reported nothing brought nothing new
    looks = new = 0
    asked: set[str] = set()  # the calls (numbers masked) that answered anew
    for action in kept:
        if action.tick > measured[0] and not changes_something(action.tool, action.summary):
            looks += 1
            if action.result not in seen:
                new += 1
                asked.add(action.shape or action.fingerprint)
        seen.add(action.result)
    anew = len(asked) > 1 and new > ANEW_SHARE * looks
    return found.model_copy(update={"evidence": {**found.evidence, "anew": anew}})
