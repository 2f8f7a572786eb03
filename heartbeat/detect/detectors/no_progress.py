"""``no_progress``: the progress metric stays flat over the last N samples.

Flat is a spread under D (max - min), or a metric wobbling under its old best:
none of the last N samples rose D above the best measured before them (of the
last 20 samples, as the monitor keeps them), and the newest is no higher than
the others (a section rewritten again and again, its score going up and down;
an index rebuilt from nothing each time it is done). A rise is a new best, as
:mod:`heartbeat.detect.evidence` reads it too: a metric that dips and comes back
has not moved on. But a metric climbing back, its newest sample the highest of
the N, is climbing: a suite broken by a refactor and mended test by test.
"""

from __future__ import annotations

import math
from collections import deque
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime

from ...base.errors import ConfigError
from ...core.models import PROGRESS_LIMIT, Anomaly, ProgressSample
from .contract import (
    History,
    ProgressTracker,
    Scope,
    make_anomaly,
    need_int,
)

__all__ = ["NoProgress", "NoProgressTracker"]


@dataclass(frozen=True)
class NoProgress:
    """``no_progress``: the last N progress samples differ by less than D (max - min), or wobble
    under the best before them (see the module's docstring).

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
        """Progress samples this detector needs to see: the monitor's 20, or N if more."""
        return max(PROGRESS_LIMIT, self.samples)

    def check(self, history: History, now: datetime) -> Anomaly | None:
        """Whether the newest sample leaves the metric flat over the last N samples."""
        if not history.progress or history.progress[-1].value is None:
            return None
        kept = history.progress[-self.history_needed :]
        values = [s.value for s in kept if s.value is not None]
        if len(values) < self.samples:
            return None
        return self._judge(values, history.tick, now)

    def _judge(self, values: list[float], tick: int, at: datetime) -> Anomaly | None:
        """The finding on the measured ``values`` of the samples looked at (N or more), oldest first."""
        n = self.samples
        last = values[-n:]
        high = max(last)
        if high - min(last) >= self.min_delta:
            before = values[:-n]
            if not before or high - max(before) >= self.min_delta or last[-1] > max(last[:-1]):
                return None
            return self._report(last, tick, at, before)
        return self._report(last, tick, at)

    def tracker(self, history: History) -> ProgressTracker:
        """An incremental ``check`` seeded from ``history``."""
        return NoProgressTracker(self, history)

    def _report(
        self, values: Sequence[float], tick: int, at: datetime, before: Sequence[float] = ()
    ) -> Anomaly:
        low, high = min(values), max(values)
        delta = high - low
        last = values[-1]
        n = len(values)
        evidence: dict[str, object] = {
            "samples": n,
            "value": last,
            "min": low,
            "max": high,
            "delta": delta,
            "min_delta": self.min_delta,
        }
        if before:
            best = evidence["best_before"] = max(before)
            message = (
                f"progress went up and down between {low:g} and {high:g} over the last {n} heartbeats "
                f"(now {last:g}), never {self.min_delta:g} above its best before them ({best:g}); it must "
                "rise past it"
            )
        elif delta == 0:
            message = f"progress stayed at {last:g} for the last {n} heartbeats"
        else:
            message = (
                f"progress moved only {delta:g} over the last {n} heartbeats "
                f"(between {low:g} and {high:g}, now {last:g})"
            )
        if not before:
            message += f"; it must move by at least {self.min_delta:g}"
        return make_anomaly("no_progress", message, tick=tick, at=at, action=None, evidence=evidence)


class NoProgressTracker:
    """The values of the samples looked at (None: not measured), as many as ``check`` reads."""

    __slots__ = ("_det", "_measured", "_values")

    def __init__(self, det: NoProgress, history: History) -> None:
        self._det = det
        self._values: deque[float | None] = deque(maxlen=det.history_needed)
        self._measured: list[float] = []
        self.slide(history.progress)

    def push(self, sample: ProgressSample, report: bool = True) -> Anomaly | None:
        """Take the next sample; a ``no_progress`` anomaly when the metric is flat."""
        values = self._values
        measured = self._measured
        if len(values) == values.maxlen and values[0] is not None:
            del measured[0]  # the oldest sample leaves the samples looked at
        values.append(sample.value)
        if sample.value is None:
            return None
        measured.append(sample.value)
        if not report or len(measured) < self._det.samples:
            return None
        return self._det._judge(measured, sample.tick, sample.at)

    def slide(self, kept: Sequence[ProgressSample]) -> bool:
        """Become what a tracker seeded from ``kept``, the end of what it took, would be (always can).

        It reads them again from ``kept`` (at most 20 samples, once a heartbeat): the
        monitor pushes no unmeasured sample, yet each takes its place among those kept.
        """
        values = self._values
        values.clear()
        values.extend(sample.value for sample in kept)  # the deque keeps the last ones it holds
        self._measured = [value for value in values if value is not None]
        return True
