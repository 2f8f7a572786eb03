"""The detectors as an agent uses them: fed action by action, each anomaly kind once per heartbeat.

:class:`Monitor` holds no scheduler and does no I/O. The runner seeds one
from the persisted state at every tick (``history``, ``progress``,
``actions_total``) and hands ``record`` to the step; a long-running agent
can keep one for its whole life and call :meth:`Monitor.start_tick` at each
heartbeat. Either way the detectors see the same bounded history, so a
stall spread over many heartbeats (one call each) is still a stall.

Per recorded action the built-in detectors cost a few dictionary updates
(their incremental trackers); a custom detector without a tracker is handed
a :class:`~heartbeat.detectors.History` of the bounded history instead.
"""

from __future__ import annotations

import math
from collections import deque
from collections.abc import Callable, Iterable, Mapping, Sequence
from datetime import datetime
from pathlib import Path
from typing import Any

from .config import DetectorsConfig
from .detectors import (
    ActionTracker,
    Detector,
    Empty,
    ErrorRate,
    History,
    Loop,
    NoProgress,
    ProgressTracker,
    Repeat,
    _digest,
    _summary,
    as_detector,
    build_detectors,
    canonical_args,
)
from .models import (
    HISTORY_LIMIT,
    PROGRESS_LIMIT,
    ActionRecord,
    Anomaly,
    ProgressSample,
    clip,
)

__all__ = ["Monitor"]

_RECORD_FIELDS = frozenset(ActionRecord.model_fields)
_BUILT_IN = (Repeat, Loop, Empty, ErrorRate, NoProgress)  # their trackers take report=False


def _new_record(fields: dict[str, Any]) -> ActionRecord:
    """An ActionRecord from values already checked here, without pydantic's validation pass.

    This is ``model_construct`` without its per-field default handling: every
    field is given. It runs once per recorded action, where validation would
    cost as much as all the detectors together; tests check the result
    equals a validated record.
    """
    record = ActionRecord.__new__(ActionRecord)
    object.__setattr__(record, "__dict__", fields)
    object.__setattr__(record, "__pydantic_fields_set__", _RECORD_FIELDS)
    object.__setattr__(record, "__pydantic_extra__", None)
    object.__setattr__(record, "__pydantic_private__", None)
    return record


def _need_aware(now: datetime) -> None:
    if not isinstance(now, datetime) or now.tzinfo is None or now.utcoffset() is None:
        raise ValueError(f"now must be a timezone-aware datetime, not {now!r}")


def _cost(cost: object) -> float:
    """``cost`` as a float, or ValueError when it is not a finite number >= 0."""
    if isinstance(cost, bool) or not isinstance(cost, int | float) or not 0 <= cost < math.inf:
        raise ValueError(f"cost must be a finite number >= 0, not {cost!r}")
    return float(cost)


class Monitor:
    """Runs the stuck detectors over an agent's actions and progress as they are recorded.

    ``config`` gives the volatile arguments, polling tools and exempt tools
    used to fingerprint actions, and (unless ``detectors`` is given) the
    detectors themselves. ``history``, ``progress`` and ``actions_total``
    seed it from a persisted state; ``history_limit`` bounds the kept
    history (default: the larger of ``models.HISTORY_LIMIT`` and what the
    detectors need).
    """

    def __init__(
        self,
        config: DetectorsConfig | None = None,
        *,
        detectors: Sequence[Detector | Callable[[History, datetime], Anomaly | None]] | None = None,
        history: Iterable[ActionRecord] = (),
        progress: Iterable[ProgressSample] = (),
        actions_total: int = 0,
        tick: int = 0,
        history_limit: int | None = None,
        search_path: Path | None = None,
    ) -> None:
        cfg = config if config is not None else DetectorsConfig()
        self.config = cfg
        self._volatile = frozenset(cfg.volatile_args)
        self._polling = frozenset(cfg.polling)
        self._exempt = frozenset(cfg.exempt)
        found = (
            build_detectors(cfg, search_path=search_path)
            if detectors is None
            else [as_detector(d) for d in detectors]
        )
        self.detectors: tuple[Detector, ...] = tuple(found)
        needs = [_needs(d) for d in found]
        if history_limit is None:
            history_limit = max(HISTORY_LIMIT, cfg.history_needed(), *needs)
        if history_limit < 1:
            raise ValueError(f"history_limit must be >= 1, not {history_limit}")
        self.history_limit = history_limit
        self.progress_limit = max(
            PROGRESS_LIMIT,
            cfg.no_progress.samples,
            *(_needs(d) for d in found if getattr(d, "scope", "action") == "progress"),
        )
        self._history: deque[ActionRecord] = deque(history, maxlen=history_limit)
        self._progress: deque[ProgressSample] = deque(progress, maxlen=self.progress_limit)
        last_index = self._history[-1].index if self._history else 0
        self.actions_total = max(actions_total, last_index)
        self.tick = tick
        self.tick_anomalies: list[Anomaly] = []
        self._reported: set[str] = set()

        seed = History(self._visible(), tuple(self._progress), tick)
        # (detector, push, lazy): a lazy push takes report=False and then builds no Anomaly.
        self._action_push: list[tuple[Detector, Callable[..., Anomaly | None], bool]] = []
        self._progress_push: list[tuple[Detector, Callable[..., Anomaly | None], bool]] = []
        self._action_checks: list[Detector] = []
        self._progress_checks: list[Detector] = []
        for det in found:
            on_progress = getattr(det, "scope", "action") == "progress"
            make = getattr(det, "tracker", None)
            lazy = isinstance(det, _BUILT_IN)
            if callable(make) and on_progress:
                progress_tracker: ProgressTracker = make(seed)
                self._progress_push.append((det, progress_tracker.push, lazy))
            elif callable(make):
                action_tracker: ActionTracker = make(seed)
                self._action_push.append((det, action_tracker.push, lazy))
            else:
                (self._progress_checks if on_progress else self._action_checks).append(det)

    def __repr__(self) -> str:
        kinds = ", ".join(d.kind for d in self.detectors)
        return (
            f"Monitor(tick={self.tick}, actions_total={self.actions_total}, "
            f"history={len(self._history)}/{self.history_limit}, detectors=[{kinds}])"
        )

    @property
    def history(self) -> list[ActionRecord]:
        """The kept actions, oldest first (a copy, at most ``history_limit``)."""
        return list(self._history)

    @property
    def progress(self) -> list[ProgressSample]:
        """The kept progress samples, oldest first (a copy, at most ``progress_limit``)."""
        return list(self._progress)

    def start_tick(self, tick: int) -> None:
        """Begin heartbeat ``tick``: each anomaly kind may be reported once again."""
        self.tick = tick
        self._reported = set()
        self.tick_anomalies = []

    def record(
        self,
        tool: str,
        args: Mapping[str, Any] | None = None,
        *,
        output: str | None = None,
        error: str | None = None,
        cost: float = 0.0,
        now: datetime,
    ) -> Anomaly | None:
        """Record one action and run the action detectors on it.

        Returns the first anomaly this action tripped whose kind was not yet
        reported in this tick, else None. An empty ``error`` text counts as
        no error.
        """
        # Exact-type tests first: this runs for every action, and isinstance costs more.
        if (tool.__class__ is not str and not isinstance(tool, str)) or not tool:
            raise TypeError(f"tool must be a non-empty str, not {tool!r}")
        if cost.__class__ is not float or not 0.0 <= cost < math.inf:
            cost = _cost(cost)
        if now.__class__ is not datetime or now.tzinfo is None:
            _need_aware(now)
        canonical = canonical_args(args, self._volatile)
        if tool in self._polling:
            # A polling tool repeats only when its result repeats; a failure is a result too.
            result = output if output is not None else (f"\x00error\x00{error}" if error else "")
            fp = _digest(tool, canonical, result)
        else:
            fp = _digest(tool, canonical, None)
        self.actions_total += 1
        record = _new_record(
            {
                "index": self.actions_total,
                "tick": self.tick,
                "at": now,
                "tool": tool,
                "fingerprint": fp,
                "summary": _summary(tool, canonical),
                "output_len": len(output.strip()) if output is not None else None,
                "error": clip(error) if error else None,
                "cost": cost,
            }
        )
        self._history.append(record)
        if tool in self._exempt:
            return None
        first: Anomaly | None = None
        reported = self._reported
        for det, push, lazy in self._action_push:
            found = push(record, det.kind not in reported) if lazy else push(record)
            if found is not None and (kept := self._keep(det, found)) and first is None:
                first = kept
        if self._action_checks:
            first = self._run_checks(self._action_checks, now, first)
        return first

    def add_progress(
        self, value: float | None, *, now: datetime, error: str | None = None
    ) -> Anomaly | None:
        """Record a progress sample (None: not measured) and run ``no_progress`` on a measured one."""
        _need_aware(now)
        if value is not None:
            if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
                raise ValueError(f"progress must be a finite number or None, not {value!r}")
            value = float(value)
        sample = ProgressSample(tick=self.tick, at=now, value=value, error=clip(error))
        self._progress.append(sample)
        if value is None:
            return None
        first: Anomaly | None = None
        for det, push, lazy in self._progress_push:
            found = push(sample, det.kind not in self._reported) if lazy else push(sample)
            if found is not None and (kept := self._keep(det, found)) and first is None:
                first = kept
        if self._progress_checks:
            first = self._run_checks(self._progress_checks, now, first)
        return first

    def _visible(self) -> tuple[ActionRecord, ...]:
        """The kept actions the detectors look at (exempt tools left out)."""
        if not self._exempt:
            return tuple(self._history)
        return tuple(a for a in self._history if a.tool not in self._exempt)

    def _run_checks(
        self, detectors: Sequence[Detector], now: datetime, first: Anomaly | None
    ) -> Anomaly | None:
        """Run detectors that have no tracker on the whole kept history."""
        history = History(self._visible(), tuple(self._progress), self.tick)
        for det in detectors:
            found = det.check(history, now)
            if found is not None and (kept := self._keep(det, found)) and first is None:
                first = kept
        return first

    def _keep(self, det: Detector, found: object) -> Anomaly | None:
        """Keep an anomaly unless its kind was already reported this tick."""
        if not isinstance(found, Anomaly):
            raise TypeError(f"detector {det!r} returned {found!r}, not an Anomaly or None")
        if found.kind in self._reported:
            return None
        self._reported.add(found.kind)
        self.tick_anomalies.append(found)
        return found


def _needs(det: object) -> int:
    """How much history a detector says it needs (0 when it does not say)."""
    needed = getattr(det, "history_needed", 0)
    return needed if isinstance(needed, int) and not isinstance(needed, bool) else 0
