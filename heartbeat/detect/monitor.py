"""The detectors as an agent uses them: fed action by action, each anomaly kind kept once per heartbeat.

:class:`Monitor` holds no scheduler and does no I/O. The runner seeds one
from the persisted state at every tick (``history``, ``progress``,
``actions_total``) and hands ``record`` to the step; a long-running agent
can keep one for its whole life and call :meth:`Monitor.start_tick` at each
heartbeat. Either way the detectors see the same bounded history, so a
stall spread over many heartbeats (one call each) is still a stall.

Per recorded action the built-in detectors cost a few dictionary updates
(their incremental trackers); a custom detector without a tracker is handed
a :class:`~heartbeat.detect.detectors.History` of the bounded history instead.

Stuck stays stuck: a later action that goes on with a pattern already reported
this heartbeat gets the finding again, flagged ``again`` and kept out of
``tick_anomalies`` (counted once), so an adapter can still redirect or stop.
"""

from __future__ import annotations

import math
from collections import deque
from collections.abc import Callable, Iterable, Mapping, Sequence
from datetime import datetime
from pathlib import Path
from typing import Any, cast

from ..config.file import DetectorsConfig
from ..core.models import (
    HISTORY_LIMIT,
    PROGRESS_LIMIT,
    ActionRecord,
    Anomaly,
    ProgressSample,
    clip,
    printable,
    progress_value,
)
from .custom import always_report, as_step
from .detectors import (
    BUILT_IN,
    LAZY_TRACKERS,
    SLIDING_TRACKERS,
    SPARSE_TRACKERS,
    STEP_TRACKERS,
    ActionView,
    BuiltinStep,
    Cycle,
    Detector,
    ErrorRate,
    History,
    Loop,
    NearRepeat,
    Recurring,
    RecurringError,
    as_detector,
    build_detectors,
)
from .detectors.contract import construct
from .detectors.envelope import answer_text
from .detectors.failures import recorded_failure
from .detectors.fingerprints import action_keys, error_text
from .detectors.no_progress import novelty
from .detectors.talk import message_facts
from .detectors.window import Successes
from .evidence import last_rise, overruled, standing
from .idle import quiet_before, quiet_wakeup, spared
from .recorded import LightAction, as_record, build_records, cost_of, keyed_record, need_aware

# The built-in trackers that look at nothing but their last ``window`` actions.
_WINDOWED: tuple[type, ...] = (Loop, ErrorRate, NearRepeat, Recurring, RecurringError, Cycle)
_INF = math.inf
__all__ = ["Monitor"]


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
        found: list[Detector] = (
            build_detectors(cfg, search_path=search_path)
            if detectors is None
            else [as_detector(d) for d in detectors]
        )
        self.detectors: tuple[Detector, ...] = tuple(found)
        scopes = [getattr(d, "scope", "action") for d in found]
        needs = [_declared(d, "history_needed") for d in found]
        if history_limit is None:
            history_limit = max(HISTORY_LIMIT, cfg.history_needed(), *needs)
        if history_limit < 1:
            raise ValueError(f"history_limit must be >= 1, not {history_limit}")
        self.history_limit = history_limit
        self.progress_limit = max(
            PROGRESS_LIMIT,
            cfg.no_progress.samples,
            *(n for n, scope in zip(needs, scopes, strict=True) if scope == "progress"),
        )
        self._history: deque[ActionRecord | LightAction] = deque(history, maxlen=history_limit)
        self._progress: deque[ProgressSample] = deque(progress, maxlen=self.progress_limit)
        last_index = self._history[-1].index if self._history else 0
        self.actions_total = max(actions_total, last_index)
        self.tick = tick
        self.turn: bool | None = False
        """This heartbeat is a live agent's next turn (a Session sets it); see :meth:`start_tick`."""
        self.tick_anomalies: list[Anomaly] = []
        self._reported: set[str] = set()
        # The metric as evidence (see .evidence): per kind the stretch its detector declares (none:
        # never overruled; read by ctx.record); _overruled_to: the last index any may be overruled at.
        self.stretch = {d.kind: _declared(d, "stretch") for d in found if _declared(d, "stretch") > 0}
        self._rise_index = 0
        self._overruled_to = 0
        self._rise_from_samples()
        # (detector, kind, step(action, tool, fp, output_len, error, report), errors only): see
        # BuiltinStep. A tracker that looks at failed actions alone (error_rate, recurring_error)
        # is stepped for those only when it can count the others from their indices.
        self._steps: list[tuple[Detector, str, BuiltinStep, bool]] = []
        # Derived from _steps by _split: what a failed action and what another one goes through.
        self._error_steps: list[tuple[Detector, str, BuiltinStep]] = []
        self._action_steps: list[tuple[Detector, str, BuiltinStep]] = []
        # The same steps alone, for the run up to the first anomaly (see _detect).
        self._error_fns: list[BuiltinStep] = []
        self._action_fns: list[BuiltinStep] = []
        # (detector, kind, push(sample, report)): with report=False a built-in tracker moves
        # on but builds no Anomaly, for a kind already reported this tick.
        self._progress_push: list[tuple[Detector, str, Callable[[Any, bool], Anomaly | None]]] = []
        self._action_checks: list[Detector] = []
        self._progress_checks: list[Detector] = []
        # (on progress, where in its list, detector, tracker) of each tracker start_tick(reseed=True)
        # must bring in line with the kept history: all but the built-in windowed ones whose window
        # it holds in full (no exempt tool, history_limit >= window): they answer as re-seeded ones.
        self._reseed: list[tuple[bool, int, Detector, Any]] = []
        self._missed = False  # a record raised part way: the next reseed seeds every tracker anew
        # The index of each tool's and call's (fingerprint's) last success, for failure-only trackers.
        self._successes = Successes(self.history_limit)
        seed = History(self._visible(), tuple(self._progress), tick)
        for det, scope in zip(found, scopes, strict=True):
            on_progress = scope == "progress"
            make = getattr(det, "tracker", None)
            if not callable(make):
                (self._progress_checks if on_progress else self._action_checks).append(det)
                continue
            entries: list[Any] = self._progress_push if on_progress else self._steps
            entry, tracker = self._track(det, seed, on_progress)
            entries.append(entry)
            exact = (
                type(det) in _WINDOWED  # a subclass may track differently
                and not self._exempt
                and not cast(Any, det).exempt
                and history_limit >= max(cast(Any, det).window, _declared(det, "history_needed"))
            )
            if not exact:
                self._reseed.append((on_progress, len(entries) - 1, det, tracker))
        self._split()
        # Light records (LightAction) only while every detector is a built-in tracker.
        self._light = not (self._action_checks or self._progress_checks) and all(
            type(det) in BUILT_IN for det in found
        )

    def _track(self, det: Detector, seed: History, on_progress: bool) -> tuple[tuple[Any, ...], Any]:
        """A fresh tracker seeded from ``seed``: its (det, kind, push) or (det, kind, step, errors only)."""
        # An ActionTracker or ProgressTracker; the built-in ones also take report.
        tracker: Any = det.tracker(seed)  # type: ignore[attr-defined]
        if on_progress:
            push = tracker.push if type(tracker) in LAZY_TRACKERS else always_report(tracker.push)
            return (det, det.kind, push), tracker
        if type(tracker) not in STEP_TRACKERS:
            return (det, det.kind, as_step(tracker.push), False), tracker
        # Every action gets the next index only when none is exempt (record skips those).
        sparse = (
            not self._exempt
            and type(tracker) in SPARSE_TRACKERS
            and tracker.errors_only(self.actions_total, self._successes)
        )
        return (det, det.kind, tracker.step, sparse), tracker

    def _split(self) -> None:
        """The step lists record runs, from ``_steps`` (in detector order: the first anomaly wins)."""
        self._error_steps = [(det, kind, step) for det, kind, step, _ in self._steps]
        self._action_steps = [(det, kind, step) for det, kind, step, sparse in self._steps if not sparse]
        self._error_fns = [step for _, _, step in self._error_steps]
        self._action_fns = [step for _, _, step in self._action_steps]
        # Only trackers stepped on failures alone read the successes: there from the first split or never.
        self._noting = len(self._action_steps) < len(self._error_steps)

    def __repr__(self) -> str:
        kinds = ", ".join(d.kind for d in self.detectors)
        return (
            f"Monitor(tick={self.tick}, actions_total={self.actions_total}, "
            f"history={len(self._history)}/{self.history_limit}, detectors=[{kinds}])"
        )

    @property
    def history(self) -> list[ActionRecord]:
        """The kept actions, oldest first (a copy, at most ``history_limit``)."""
        if self._light:  # it may hold LightActions: build them now, once
            build_records(self._history)
        return cast(list[ActionRecord], list(self._history))

    @property
    def progress(self) -> list[ProgressSample]:
        """The kept progress samples, oldest first (a copy, at most ``progress_limit``)."""
        return list(self._progress)

    def start_tick(self, tick: int, *, reseed: bool = False, turn: bool | None = False) -> None:
        """Begin heartbeat ``tick``: each anomaly kind may be reported anew.

        With ``reseed`` the detectors also start over from the kept history, as
        a Monitor built from the state saved after the last heartbeat would
        (what the runner does at every tick; replay uses it to answer exactly
        as a live run). Without it they carry on: a run of repeats may then be
        counted past the kept history. A ``turn`` (a live agent's next model
        turn, as a Session tells it) is never an idle wake-up (see :mod:`.idle`);
        None (a trace line without its time) is one, never a round that saw nothing move.
        """
        self.tick, self.turn = tick, turn
        self._reported = set()
        self.tick_anomalies = []
        self._rise_from_samples()  # as a fresh one finds it: a trimmed sample takes its high along
        if not (reseed and self._reseed):
            return
        actions = self._visible()
        seed = None
        missed, self._missed = self._missed, False
        for i, (on_progress, at, det, tracker) in enumerate(self._reseed):
            kept = self._progress if on_progress else actions  # a sliding tracker forgets the rest
            if not missed and type(tracker) in SLIDING_TRACKERS and tracker.slide(kept):
                continue
            seed = seed or History(actions, tuple(self._progress), tick)
            entries: list[Any] = self._progress_push if on_progress else self._steps
            entries[at], tracker = self._track(det, seed, on_progress)
            self._reseed[i] = (on_progress, at, det, tracker)
        if seed is not None:
            self._split()

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

        Returns the first anomaly this action tripped whose kind was not yet reported in this
        tick; else one it tripped again (a later action that continues a pattern already
        reported, flagged ``again``); else None. An empty ``error`` text counts as no error.
        """
        # Exact-type tests first: this runs for every action, and isinstance costs more.
        if (tool.__class__ is not str and not isinstance(tool, str)) or not tool:
            raise TypeError(f"tool must be a non-empty str, not {tool!r}")
        if not tool.isprintable():  # a name holding a line break would forge lines where it is shown
            tool = printable(tool)
        if cost.__class__ is not float or not 0.0 <= cost < _INF:
            cost = cost_of(cost)
        if now.__class__ is not datetime or now.tzinfo is None:
            need_aware(now)
        if output is not None:  # every key is read from what it tells, not what wrapped it on its way
            output = answer_text(output if output.__class__ is str else str(output))
        if error is not None and error.__class__ is not str:
            error = str(error)
        error = recorded_failure(tool, args, output, error)
        fp, shape, result, summary, length, words = action_keys(  # words: the failure key
            tool, args, output, error, self._volatile, tool in self._polling
        )
        facts = message_facts(tool, args, output)  # a message's data, None for other calls
        index = self.actions_total = self.actions_total + 1
        if error is not None:  # as kept and shown: masked, escaped, cut (the keys read it whole)
            error = error_text(error)
        record: ActionRecord | LightAction = LightAction(
            index, self.tick, now, tool, fp, summary, length, error, cost, shape, result, words, facts
        )
        if not self._light:  # a custom detector reads real ActionRecords
            record = as_record(record)
        self._history.append(record)
        if self._exempt and tool in self._exempt:
            return None
        return self._detect(record, tool, fp, length, error, now)

    def record_keys(
        self,
        tool: str,
        keys: Mapping[str, Any],
        *,
        error: str | None = None,
        cost: float = 0.0,
        now: datetime,
    ) -> Anomaly | None:
        """Record an action from the keys computed when it happened (a journal's), as :meth:`record` did
        (``keys`` as :func:`~heartbeat.detect.recorded.keyed_record` takes them, used as they are)."""
        need_aware(now)
        index = self.actions_total + 1
        record = keyed_record(
            tool, keys, index=index, tick=self.tick, at=now, error=error, cost=cost, light=self._light
        )
        self.actions_total = index
        self._history.append(record)
        if self._exempt and tool in self._exempt:
            return None
        return self._detect(record, tool, record.fingerprint, record.output_len, record.error, now)

    def _detect(
        self,
        record: ActionRecord | LightAction,
        tool: str,
        fp: str,
        length: int | None,
        error: str | None,
        now: datetime,
    ) -> Anomaly | None:
        """Run the action detectors on a recorded action: its first new anomaly, else one seen ``again``."""
        first: Anomaly | None = None
        reported = self._reported
        index = self.actions_total
        steps = self._action_steps if error is None else self._error_steps
        if error is None and self._noting:
            self._successes.note(tool, fp, record.summary, index)
        try:
            overruling = index <= self._overruled_to  # the metric rose within some detector's stretch
            start = 0
            if not overruling:
                # Until one trips, every step reports and none is overruled: only the calls, in the
                # common case of an action that trips nothing (a few bytecodes per tracker).
                fns = self._action_fns if error is None else self._error_fns
                for step in fns:
                    found = step(record, tool, fp, length, error, True)
                    if found is not None:
                        start = fns.index(step) + 1  # the general loop below goes on after it
                        first = self._keep(steps[start - 1][0], found)
                        break
                else:
                    start = -1  # none tripped
            if start >= 0:
                rise = self._rise_index
                stretch = self.stretch
                for det, kind, step in steps[start:] if start else steps:
                    if first is not None and kind in reported:  # one finding seen again is enough
                        step(record, tool, fp, length, error, False)
                        continue
                    report = not overruling or index - stretch.get(kind, 0) >= rise
                    found = step(record, tool, fp, length, error, report)
                    if found is not None:
                        first = _first(first, self._keep(det, found))
        except BaseException:
            self._missed = True  # the trackers after the one that raised did not take the action
            raise
        if self._action_checks:
            first = self._run_checks(self._action_checks, now, first)
        return first

    @property
    def newest(self) -> ActionView | None:
        """The newest recorded action as the detectors saw it (not copied or built), None before any."""
        return self._history[-1] if self._history else None

    def reset_progress(self) -> None:
        """Forget the progress samples, as ``heartbeat resume`` does (trackers reseed next tick)."""
        self._progress.clear()
        self._missed = True
        self._rise_from_samples()  # no sample left to speak for a rise

    def add_progress(
        self, value: float | None, *, now: datetime, error: str | None = None, baseline: float | None = None
    ) -> Anomaly | None:
        """Record a progress sample (None: not measured; its ``baseline``: see :class:`ProgressSample`)
        and run ``no_progress`` on a measured one."""
        need_aware(now)
        value = progress_value(value)
        baseline = progress_value(baseline) if value is not None else None  # what a sample rose from
        if error is not None and error.__class__ is not str:
            error = str(error)
        fields = {"tick": self.tick, "at": now, "value": value, "error": clip(error), "baseline": baseline}
        sample = construct(ProgressSample, fields)  # every field checked above: built unvalidated
        self._progress.append(sample)
        woke = not (turn := self.turn)  # a wake-up of the schedule, no model turn: the wake-up is a wait
        # Whether it was quiet (its looks judged: costly) matters to a finding or a check alone.
        judged = woke and bool(self.tick_anomalies or (value is not None and self._progress_checks))
        timed = turn is not None  # when it came is known: it may be a round that saw nothing move
        quiet = quiet_wakeup(self._history, self.tick, timed) if judged else None
        idle, rose_before = quiet == "idle", self._rise_index
        if value is not None:
            self._rise_from_samples()
        busy = woke and bool(self.tick_anomalies) and not quiet  # its findings may be a quiet wake-up's
        after = quiet_before(self._history, self.tick, timed) if busy else 0
        if (quiet or after or self._rise_index != rose_before) and self.tick_anomalies:
            # The heartbeat's own sample, its looks finding no work or something moving, or a quiet
            # wake-up just before speak for the actions before: the policy never sees what they overrule.
            kept = standing(self.tick_anomalies, self.stretch, self._rise_index, quiet is not None, after)
            self._reported -= {a.kind for a in self.tick_anomalies} - {a.kind for a in kept}
            self.tick_anomalies = kept
        if value is None:
            return None
        first: Anomaly | None = None
        try:
            for det, kind, push in self._progress_push:
                found = push(sample, not idle and kind not in self._reported)  # idle: no work came
                if found is not None and woke and not judged:  # a built-in's report only gates its return
                    judged, idle = True, quiet_wakeup(self._history, self.tick, timed) == "idle"
                if found is not None and not idle and not spared(det, self._history, self._progress, turn):
                    first = _first(first, self._keep(det, novelty(det, found, self._history, self._progress)))
        except BaseException:
            self._missed = True
            raise
        if self._progress_checks and not idle:
            first = self._run_checks(self._progress_checks, now, first)
        return first

    @property
    def rise_index(self) -> int:
        """The newest action recorded before the progress metric last rose (0: no rise kept)."""
        return self._rise_index

    def overruled(self, kind: str, index: int | None = None) -> bool:
        """Whether a ``kind`` finding at action ``index`` (default: the newest) is overruled
        by the progress metric (see :mod:`heartbeat.detect.evidence`)."""
        at = self.actions_total if index is None else index
        return overruled(self.stretch.get(kind), at, self._rise_index)

    def _rise_from_samples(self) -> None:
        """The metric's last rise and the last action index any kind may be overruled at."""
        rise = self._rise_index = last_rise(self._progress, self._history)
        self._overruled_to = rise - 1 + max(self.stretch.values(), default=0) if rise else 0

    def _visible(self) -> tuple[ActionRecord, ...]:
        """The kept actions the detectors look at (exempt tools left out).

        Light records among them only while every detector is a built-in one
        (see LightAction), which reads nothing an ActionRecord has that they lack.
        """
        if not self._exempt:
            return cast(tuple[ActionRecord, ...], tuple(self._history))
        return cast(tuple[ActionRecord, ...], tuple(a for a in self._history if a.tool not in self._exempt))

    def _run_checks(
        self, detectors: Sequence[Detector], now: datetime, first: Anomaly | None
    ) -> Anomaly | None:
        """Run detectors that have no tracker on the whole kept history."""
        history = History(self._visible(), tuple(self._progress), self.tick)
        for det in detectors:
            found = det.check(history, now)
            if found is not None:
                first = _first(first, self._keep(det, found))
        return first

    def _keep(self, det: Detector, found: object) -> Anomaly | None:
        """Keep a new anomaly in ``tick_anomalies``; one of a kind reported before comes back
        ``again``; None for one the progress metric overrules (a custom detector's: the built-in
        trackers are told not to report it)."""
        if not isinstance(found, Anomaly):
            raise TypeError(f"detector {det!r} returned {found!r}, not an Anomaly or None")
        if found.action is not None and self.overruled(found.kind, found.action):
            return None
        if found.kind in self._reported:
            return construct(Anomaly, {**found.__dict__, "again": True})  # model_copy costs more
        self._reported.add(found.kind)
        if not found.message.isprintable():
            # An anomaly is one line wherever it is shown: a tool name or an error text the
            # agent chose, quoted in it, must not forge lines of tick or status output.
            found = found.model_copy(update={"message": printable(found.message)})
        self.tick_anomalies.append(found)
        return found


def _first(first: Anomaly | None, found: Anomaly | None) -> Anomaly | None:
    """What an action reports: the first anomaly it tripped, a new finding before one seen again."""
    if found is None:
        return first
    return found if first is None or (first.again and not found.again) else first


def _declared(det: object, name: str) -> int:
    """A count a detector declares (``history_needed``, ``stretch``); 0 when it declares none."""
    value = getattr(det, name, 0)
    return value if isinstance(value, int) and not isinstance(value, bool) else 0
