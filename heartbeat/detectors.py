"""Stuck detectors: pure functions of an agent's recent history.

A detector is anything with a ``kind`` and a ``check(history, now)`` that
returns an :class:`~heartbeat.models.Anomaly` or None; a plain function
``f(history, now)`` is accepted wherever a detector is. Every detector gets
the same context object, :class:`History`, so new needs add a field instead
of changing every signature.

``check`` answers one question: *did the newest entry of the history trip
this detector?* An action detector therefore returns None when the newest
action is one it does not look at (an exempt tool, an action without an
output for ``empty``, an action that did not fail for ``error_rate``). That
is what makes "each kind once per tick at the first action that tripped it"
and replay exact.

The built-ins (:class:`Repeat`, :class:`Loop`, :class:`Empty`,
:class:`ErrorRate`, :class:`NoProgress`) are small frozen dataclasses that
validate their parameters. Each also offers ``tracker(history)``: an object
seeded from a history whose ``push(entry)`` gives the same answer as
``check`` on the history plus that entry, in time bounded by the window
(running counts instead of rescans). A tracker is seeded from only the tail
of the history it needs (the current run, or the last window), read from the
newest end, since a tick seeds one per detector. :class:`~heartbeat.monitor.Monitor`
uses the trackers; ``check`` is the readable reference they are tested
against.

Fingerprints: an action's tool plus its arguments as canonical JSON (sorted
keys, no spaces, absent or None arguments count as ``{}``) after dropping the
volatile argument names, hashed to 16 hex characters so the state stays
small. For a polling tool the call's result is part of the fingerprint too.
"""

from __future__ import annotations

import json
import math
from collections import Counter, deque
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from hashlib import blake2b
from itertools import islice
from json.encoder import c_make_encoder, encode_basestring  # type: ignore[attr-defined]
from pathlib import Path
from typing import Any, Literal, Protocol, TypeVar, cast, runtime_checkable

from pydantic import BaseModel

from .config import DetectorsConfig
from .errors import ConfigError
from .models import ActionRecord, Anomaly, ProgressSample, clip
from .plugins import load_object

__all__ = [
    "ActionTracker",
    "Detector",
    "Empty",
    "ErrorRate",
    "FunctionDetector",
    "History",
    "Loop",
    "NoProgress",
    "ProgressTracker",
    "Repeat",
    "as_detector",
    "build_detectors",
    "canonical_args",
    "fingerprint",
    "load_detector",
    "summarize",
]

ToolThreshold = int | Literal["off"]
_M = TypeVar("_M", bound=BaseModel)
Scope = Literal["action", "progress"]

# --------------------------------------------------------------------------
# Fingerprints and summaries
# --------------------------------------------------------------------------

_ENCODER = json.JSONEncoder(sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)


def _encode_slow(value: object, _indent: int) -> list[str]:
    return [_ENCODER.encode(value)]


# The C encoder called directly: this runs once per recorded action, and the
# json.dumps wrapper costs as much again as the encoding of a small dict.
_encode: Callable[[object, int], Sequence[str]] = (
    c_make_encoder(None, str, encode_basestring, None, ":", ",", True, False, True)
    if c_make_encoder is not None
    else _encode_slow
)
_join = "".join


def _text_keys(value: object) -> object:
    """``value`` with every dict key turned into text, so mixed key types can be sorted."""
    if isinstance(value, Mapping):
        return {str(k): _text_keys(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_text_keys(v) for v in value]
    return value


def canonical_args(args: object, volatile: Collection[str] = ()) -> str:
    """Arguments as canonical JSON: sorted keys, no spaces, None as ``{}``, volatile names dropped.

    Values JSON cannot hold are written as their ``str()``; a mapping with
    keys of mixed types has its keys compared as text.
    """
    # Plain dicts first and no any(): this runs for every recorded action.
    if args.__class__ is dict:
        if volatile:
            copied = False
            for name in volatile:
                if name in args:
                    if not copied:
                        args = args.copy()
                        copied = True
                    del args[name]
    elif args is None:
        return "{}"
    elif isinstance(args, Mapping):
        return canonical_args(dict(args), volatile)
    try:
        return _join(_encode(args, 0))
    except (TypeError, ValueError, RecursionError):
        pass  # unsortable keys or a self-reference: fall back to a slower, total form
    try:
        return _ENCODER.encode(_text_keys(args))
    except (TypeError, ValueError, RecursionError):
        return repr(args)


# An empty hasher to copy: a copy costs a third less than blake2b(..., digest_size=8),
# whose keyword parsing dominates for short inputs. The digest is the same.
_BLAKE2B_8 = blake2b(digest_size=8)


def _digest(tool: str, canonical: str, output: str | None) -> str:
    """The fingerprint of an already canonical call (and its result, for polling tools)."""
    text = f"{tool}\x00{canonical}" if output is None else f"{tool}\x00{canonical}\x00{output}"
    try:
        data = text.encode()
    except UnicodeEncodeError:  # a lone surrogate: hashed as its UTF-8-like bytes
        data = text.encode("utf-8", "surrogatepass")
    hasher = _BLAKE2B_8.copy()
    hasher.update(data)
    return hasher.hexdigest()


def _summary(tool: str, canonical: str) -> str:
    """``tool(args)`` from canonical arguments, ``tool()`` when there are none."""
    text = f"{tool}()" if canonical == "{}" else f"{tool}({canonical})"
    return text if len(text) <= 200 else clip(text) or ""


def fingerprint(tool: str, args: object, *, volatile: Collection[str] = (), output: str | None = None) -> str:
    """The 16-hex-digit hash of ``tool`` + canonical ``args`` (+ ``output`` when given).

    Pass ``output`` only for polling tools: their result is part of what
    repeats.
    """
    return _digest(tool, canonical_args(args, volatile), output)


def summarize(tool: str, args: object, volatile: Collection[str] = ()) -> str:
    """``search({"q":"x"})`` as a human reads it, cut to 200 characters."""
    return _summary(tool, canonical_args(args, volatile))


# --------------------------------------------------------------------------
# The contract
# --------------------------------------------------------------------------


@dataclass(frozen=True)
class History:
    """What every detector is handed: recent actions and progress samples, oldest first."""

    actions: Sequence[ActionRecord] = ()
    progress: Sequence[ProgressSample] = ()
    tick: int = 0

    @property
    def last(self) -> ActionRecord | None:
        """The newest action, or None."""
        return self.actions[-1] if self.actions else None


class ActionView(Protocol):
    """What the built-in trackers read of an action: an :class:`ActionRecord` has it all.

    :class:`~heartbeat.monitor.Monitor` feeds them a lighter record of the same
    fields while no other detector needs a real ActionRecord, and builds the
    model only when its history is read.
    """

    @property
    def index(self) -> int: ...
    @property
    def tick(self) -> int: ...
    @property
    def at(self) -> datetime: ...
    @property
    def tool(self) -> str: ...
    @property
    def fingerprint(self) -> str: ...
    @property
    def summary(self) -> str: ...
    @property
    def output_len(self) -> int | None: ...
    @property
    def error(self) -> str | None: ...
    @property
    def cost(self) -> float: ...


@runtime_checkable
class Detector(Protocol):
    """A stuck detector: ``check`` tells whether the newest history entry tripped it.

    An optional ``scope`` attribute says when the monitor runs it:
    ``"action"`` (the default) after each recorded action, ``"progress"``
    after each progress sample. An optional ``tracker(history)`` returning an
    :class:`ActionTracker` (or :class:`ProgressTracker`) lets the monitor
    skip building a :class:`History` per action.
    """

    @property
    def kind(self) -> str:
        """The anomaly kind it reports, e.g. ``"repeat"``."""

    def check(self, history: History, now: datetime) -> Anomaly | None:
        """The anomaly the newest entry of ``history`` trips, else None."""


class ActionTracker(Protocol):
    """Incremental form of an action detector: same answers as ``check``, less work.

    The built-in trackers also take ``push(action, report=False)``: the state
    moves on but no Anomaly is built, for a kind already reported this tick.
    """

    def push(self, action: ActionRecord) -> Anomaly | None:
        """Take the next action; the anomaly it trips, else None."""


class ProgressTracker(Protocol):
    """Incremental form of a progress detector."""

    def push(self, sample: ProgressSample) -> Anomaly | None:
        """Take the next progress sample; the anomaly it trips, else None."""


@dataclass(frozen=True)
class FunctionDetector:
    """A plain function ``f(history, now) -> Anomaly | None`` used as a detector."""

    func: Callable[[History, datetime], Anomaly | None]
    kind: str = "custom"
    scope: Scope = "action"

    def check(self, history: History, now: datetime) -> Anomaly | None:
        """Call the function."""
        return self.func(history, now)


def as_detector(obj: object) -> Detector:
    """``obj`` itself when it is a detector, a plain callable wrapped, else TypeError."""
    if callable(getattr(obj, "check", None)):
        kind = getattr(obj, "kind", None)
        if not isinstance(kind, str) or not kind:
            raise TypeError(f"{obj!r} has a check method but no 'kind' text")
        return cast(Detector, obj)  # duck-typed: kind and check are there
    if callable(obj):
        name = getattr(obj, "kind", None) or getattr(obj, "__name__", None) or "custom"
        scope = getattr(obj, "scope", "action")
        return FunctionDetector(obj, kind=str(name), scope="progress" if scope == "progress" else "action")
    raise TypeError(f"{obj!r} is not a detector: it has no check method and is not callable")


# --------------------------------------------------------------------------
# Shared helpers
# --------------------------------------------------------------------------


def _frozen(names: Iterable[str]) -> frozenset[str]:
    return names if isinstance(names, frozenset) else frozenset(names)


def _need_int(owner: str, name: str, value: object, minimum: int) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
        raise ConfigError(f"{owner}: {name} must be an integer >= {minimum}, got {value!r}")


def _construct(cls: type[_M], fields: dict[str, Any]) -> _M:
    """A model from values this package built and checked itself, skipping validation.

    What ``model_construct`` does, minus its per-field default handling:
    ``fields`` holds every field. Detectors run for every recorded action,
    and validation there would cost more than the detection; the tests
    check that constructed records and anomalies equal validated ones.
    """
    model = _new_model(cls)
    _set_dict(model, fields)
    _set_fields_set(model, _FIELDS[cls])
    _set_extra(model, None)
    _set_private(model, None)
    return model


_new_model = BaseModel.__new__
# BaseModel's slots, set through their descriptors: object.__setattr__ would look each
# name up first. pydantic's own model_construct sets the same four.
_set_dict = BaseModel.__dict__["__dict__"].__set__
_set_fields_set = BaseModel.__dict__["__pydantic_fields_set__"].__set__
_set_extra = BaseModel.__dict__["__pydantic_extra__"].__set__
_set_private = BaseModel.__dict__["__pydantic_private__"].__set__
_FIELDS: dict[type[BaseModel], frozenset[str]] = {
    cls: frozenset(cls.model_fields) for cls in (ActionRecord, Anomaly, ProgressSample)
}


def _anomaly(
    kind: str,
    message: str,
    *,
    tick: int,
    at: datetime,
    action: ActionView | None,
    evidence: dict[str, Any],
    tool: str | None = None,
) -> Anomaly:
    if at.tzinfo is None or at.utcoffset() is None:
        raise ValueError(f"now must be a timezone-aware datetime, not {at!r}")
    return _construct(
        Anomaly,
        {
            "kind": kind,
            "message": message,
            "tick": tick,
            "action": action.index if action is not None else None,
            "at": at,
            "tool": tool if tool is not None else (action.tool if action is not None else None),
            "evidence": evidence,
        },
    )


def _tail(actions: Sequence[ActionView], n: int, exempt: Collection[str]) -> list[ActionView]:
    """The last ``n`` actions whose tool is not exempt, oldest first: what a tracker is seeded from."""
    found: list[ActionView] = []
    if n <= 0:
        return found
    for action in reversed(actions):
        if action.tool not in exempt:
            found.append(action)
            if len(found) == n:
                break
    found.reverse()
    return found


def _times(n: int) -> str:
    return "once" if n == 1 else "twice" if n == 2 else f"{n} times"


# --------------------------------------------------------------------------
# repeat
# --------------------------------------------------------------------------


@dataclass(frozen=True)
class Repeat:
    """``repeat``: the last N actions have one fingerprint (N per tool, or ``"off"``)."""

    threshold: int = 3
    tools: Mapping[str, ToolThreshold] = field(default_factory=dict)
    exempt: Collection[str] = frozenset()
    polling: Collection[str] = frozenset()
    kind: str = field(default="repeat", init=False, repr=False)
    _limits: dict[str, int] = field(init=False, repr=False, compare=False)
    _skip: frozenset[str] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        _need_int("repeat", "threshold", self.threshold, 2)
        limits: dict[str, int] = {}
        off = set()
        for tool, value in dict(self.tools).items():
            if value == "off":
                off.add(tool)
            else:
                _need_int("repeat", f"tools.{tool}", value, 2)
                limits[tool] = int(value)
        object.__setattr__(self, "tools", dict(self.tools))
        object.__setattr__(self, "exempt", _frozen(self.exempt))
        object.__setattr__(self, "polling", _frozen(self.polling))
        object.__setattr__(self, "_limits", limits)
        object.__setattr__(self, "_skip", frozenset(self.exempt) | off)

    def __hash__(self) -> int:
        return hash((self.threshold, tuple(sorted(self.tools.items())), self.exempt, self.polling))

    @property
    def history_needed(self) -> int:
        """Past actions this detector needs to see."""
        return max([self.threshold, *self._limits.values()])

    def threshold_for(self, tool: str) -> int | None:
        """The threshold that applies to ``tool``; None when the tool is off or exempt."""
        if tool in self._skip:
            return None
        return self._limits.get(tool, self.threshold)

    def check(self, history: History, now: datetime) -> Anomaly | None:
        """Whether the newest action completes a run of N identical fingerprints."""
        last = history.last
        if last is None or (limit := self.threshold_for(last.tool)) is None:
            return None
        run = 0
        for action in reversed(history.actions):
            if action.tool in self._skip:
                continue
            if action.fingerprint != last.fingerprint:
                break
            run += 1
        return self._report(last, run, history.tick, now) if run >= limit else None

    def tracker(self, history: History) -> ActionTracker:
        """An incremental ``check`` seeded from ``history``."""
        return _RepeatTracker(self, history)

    def _report(self, action: ActionView, run: int, tick: int, at: datetime) -> Anomaly:
        limit = self.threshold_for(action.tool)
        same = "the same arguments"
        if action.tool in self.polling:
            same += " and the same result"
        return _anomaly(
            "repeat",
            f"{action.summary} was called {_times(run)} in a row with {same} (limit {limit})",
            tick=tick,
            at=at,
            action=action,
            evidence={
                "count": run,
                "threshold": limit,
                "call": action.summary,
                "fingerprint": action.fingerprint,
                "avoid": action.summary,
            },
        )


class _RepeatTracker:
    """Run length of the newest fingerprint."""

    __slots__ = ("_det", "_fp", "_limits", "_run", "_skip", "_threshold")

    def __init__(self, det: Repeat, history: History) -> None:
        # The detector's settings copied into slots: push runs for every recorded action.
        self._det = det
        self._skip = det._skip
        self._limits = det._limits
        self._threshold = det.threshold
        # Seeded from the newest end: only the current run matters, not the whole history.
        fp: str | None = None
        run = 0
        for action in reversed(history.actions):
            if action.tool in self._skip:
                continue
            if fp is None:
                fp = action.fingerprint
            elif action.fingerprint != fp:
                break
            run += 1
        self._fp = fp if fp is not None else ""
        self._run = run

    def push(self, action: ActionRecord, report: bool = True) -> Anomaly | None:
        """Take the next action; a ``repeat`` anomaly when it completes a run."""
        return self.step(action, action.tool, action.fingerprint, action.output_len, action.error, report)

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
        if tool in self._skip:
            return None
        if fp == self._fp:
            run = self._run = self._run + 1
        else:
            self._fp = fp
            run = self._run = 1
        if not report or run < self._limits.get(tool, self._threshold):
            return None
        return self._det._report(action, run, action.tick, action.at)


# --------------------------------------------------------------------------
# loop
# --------------------------------------------------------------------------

_CYCLE_SHOWN = 6  # steps of a cycle written into a message; the rest are counted
_CYCLE_KEPT = 20  # steps of a cycle kept in the evidence, so state.json stays small


def _cycle_text(summaries: Sequence[str]) -> str:
    shown = [clip(s, 80) or "" for s in summaries[:_CYCLE_SHOWN]]
    more = len(summaries) - len(shown)
    return " -> ".join(shown) + (f" -> … ({more} more)" if more else "")


@dataclass(frozen=True)
class Loop:
    """``loop``: a cycle of 2+ distinct fingerprints repeats back to back at the tail of the window."""

    window: int = 20
    repeats: int = 2
    exempt: Collection[str] = frozenset()
    kind: str = field(default="loop", init=False, repr=False)

    def __post_init__(self) -> None:
        _need_int("loop", "window", self.window, 2)
        _need_int("loop", "repeats", self.repeats, 2)
        object.__setattr__(self, "exempt", _frozen(self.exempt))

    @property
    def history_needed(self) -> int:
        """Past actions this detector needs to see."""
        return self.window

    def check(self, history: History, now: datetime) -> Anomaly | None:
        """The shortest cycle the newest action completes, if any."""
        last = history.last
        if last is None or last.tool in self.exempt:
            return None
        seq = [a for a in history.actions if a.tool not in self.exempt][-self.window :]
        fps = [a.fingerprint for a in seq]
        n = len(fps)
        run = 1
        while run < n and fps[n - 1 - run] == fps[-1]:
            run += 1
        for period in range(run + 1, n // self.repeats + 1):
            need = period * (self.repeats - 1)
            matched = 0
            while matched < n - period and fps[n - 1 - matched] == fps[n - 1 - matched - period]:
                matched += 1
            if matched >= need:
                return self._report(seq[-period:], matched, history.tick, now)
        return None

    def tracker(self, history: History) -> ActionTracker:
        """An incremental ``check`` seeded from ``history``."""
        return _LoopTracker(self, history)

    def _report(self, tail: Sequence[ActionView], matched: int, tick: int, at: datetime) -> Anomaly:
        period = len(tail)
        span = min(matched + period, self.window)
        repeats = span // period
        # Start the cycle where the repetition started, not wherever it stands now.
        shift = span % period
        cycle = [*tail[period - shift :], *tail[: period - shift]]
        summaries = [a.summary for a in cycle]
        text = _cycle_text(summaries)
        last = tail[-1]
        return _anomaly(
            "loop",
            f"the cycle {text} repeated {repeats} times back to back "
            f"({period} steps, the last {span} actions)",
            tick=tick,
            at=at,
            action=last,
            evidence={
                "period": period,
                "repeats": repeats,
                "actions": span,
                "window": self.window,
                "cycle": summaries[:_CYCLE_KEPT],
                "avoid": text,
            },
        )


_NO_RUNS: dict[int, int] = {}  # shared and never written: no period has a match run


def _seed_runs(fps: Sequence[str], periods: Iterable[int]) -> dict[int, int]:
    """For each period p, how many newest positions i in a row have ``fps[i] == fps[i - p]``."""
    runs: dict[int, int] = {}
    last = len(fps) - 1
    for p in periods:
        m = 0
        while last - m - p >= 0 and fps[last - m] == fps[last - m - p]:
            m += 1
        runs[p] = m
    return runs


class _LoopTracker:
    """Per-period match runs, kept only for periods where the new fingerprint sits.

    ``_runs[p]`` counts how many newest positions i in a row have
    ``fp[i] == fp[i - p]``. A new fingerprint extends the runs of exactly
    the periods p where it occurred p positions back, and ends every other
    run, so one push costs the number of its recent occurrences (found
    through ``_where``, so a window of 500 costs no scan). Periods not
    longer than the current run of identical fingerprints are never kept:
    they cannot form a cycle of distinct fingerprints, and the first
    different fingerprint ends them anyway.

    Seeding is lazy, since a tick re-seeds a tracker and often pushes no
    loop-relevant action: the positions, the current run and the seed's
    fingerprints are kept, and the match runs are counted from those at the
    first push, only for the periods where its fingerprint sits. Only the
    last ``window`` actions are seeded from: a reported loop spans at most
    the window (see :meth:`Loop._report`), so older ones change no answer.
    """

    __slots__ = (
        "_det",
        "_exempt",
        "_fp",
        "_max_period",
        "_n",
        "_need",
        "_recent",
        "_run",
        "_runs",
        "_seed",
        "_where",
    )

    def __init__(self, det: Loop, history: History) -> None:
        self._det = det
        self._exempt = det.exempt
        self._max_period = det.window // det.repeats
        self._need = det.repeats - 1
        tail = _tail(history.actions, det.window, det.exempt)
        n = self._n = len(tail)
        # The newest actions, oldest first, as far back as the longest period, and where
        # each fingerprint sits among them (global positions, oldest first).
        recent = tail[max(0, n - self._max_period) :]
        self._recent: deque[ActionView] = deque(recent)
        where: dict[str, list[int]] = {}
        for i, action in enumerate(recent, n - len(recent)):
            where.setdefault(action.fingerprint, []).append(i)
        self._where = where
        self._runs: dict[int, int] = _NO_RUNS
        fps = [action.fingerprint for action in tail]
        self._seed: list[str] | None = fps or None
        self._fp = fps[-1] if fps else ""
        run = 0
        for fp in reversed(fps):
            if fp != self._fp:
                break
            run += 1
        self._run = run

    def push(self, action: ActionRecord, report: bool = True) -> Anomaly | None:
        """Take the next action; a ``loop`` anomaly for the shortest cycle it completes."""
        return self.step(action, action.tool, action.fingerprint, action.output_len, action.error, report)

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
        i = self._n
        self._n = i + 1
        if fp == self._fp:
            run = self._run = self._run + 1
        else:
            self._fp = fp
            run = self._run = 1
        best = 0
        positions_of = self._where
        where = positions_of.get(fp)
        if where is None:
            positions_of[fp] = [i]
            self._runs = _NO_RUNS
            self._seed = None  # no run goes on: the seed's are not needed any more
        else:
            runs = self._runs
            seed = self._seed
            if seed is not None:  # the first push after seeding: count the seed's runs now
                runs = _seed_runs(seed, [i - j for j in where])
                self._seed = None
            new: dict[int, int] = {}
            need = self._need
            # Oldest first, so periods fall and the last match is the shortest; the newest
            # run-1 positions are the current run itself (periods <= run) and are skipped.
            for j in where if run == 1 else where[: max(0, len(where) - run + 1)]:
                p = i - j
                m = new[p] = runs.get(p, 0) + 1
                if m >= p * need:
                    best = p
            where.append(i)
            self._runs = new
        recent = self._recent
        recent.append(action)
        if len(recent) > self._max_period:
            old = recent.popleft().fingerprint
            positions = positions_of[old]
            if len(positions) == 1:
                del positions_of[old]
            else:
                del positions[0]
        if not best or not report:
            return None
        tail = list(islice(recent, len(recent) - best, None))
        return self._det._report(tail, self._runs[best], action.tick, action.at)


# --------------------------------------------------------------------------
# empty
# --------------------------------------------------------------------------


@dataclass(frozen=True)
class Empty:
    """``empty``: the last N reported outputs are each at most C characters once stripped."""

    threshold: int = 3
    max_chars: int = 10
    exempt: Collection[str] = frozenset()
    kind: str = field(default="empty", init=False, repr=False)

    def __post_init__(self) -> None:
        _need_int("empty", "threshold", self.threshold, 1)
        _need_int("empty", "max_chars", self.max_chars, 0)
        object.__setattr__(self, "exempt", _frozen(self.exempt))

    @property
    def history_needed(self) -> int:
        """Past actions this detector needs to see."""
        return self.threshold

    def check(self, history: History, now: datetime) -> Anomaly | None:
        """Whether the newest action's output completes a run of N empty outputs."""
        last = history.last
        if last is None or last.tool in self.exempt or last.output_len is None:
            return None
        run = 0
        for action in reversed(history.actions):
            if action.tool in self.exempt or action.output_len is None:
                continue
            if action.output_len > self.max_chars:
                break
            run += 1
        return self._report(last, run, history.tick, now) if run >= self.threshold else None

    def tracker(self, history: History) -> ActionTracker:
        """An incremental ``check`` seeded from ``history``."""
        return _EmptyTracker(self, history)

    def _report(self, action: ActionView, run: int, tick: int, at: datetime) -> Anomaly:
        what = "empty" if self.max_chars == 0 else f"empty or at most {self.max_chars} characters"
        return _anomaly(
            "empty",
            f"{run} outputs in a row were {what}; last: {action.summary}",
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


class _EmptyTracker:
    """Run length of short outputs among the actions that reported one."""

    __slots__ = ("_det", "_exempt", "_max_chars", "_run", "_threshold")

    def __init__(self, det: Empty, history: History) -> None:
        self._det = det
        self._exempt = det.exempt
        self._max_chars = det.max_chars
        self._threshold = det.threshold
        # Seeded from the newest end: the current run of short outputs is all that matters.
        run = 0
        for action in reversed(history.actions):
            length = action.output_len
            if length is None or action.tool in self._exempt:
                continue
            if length > self._max_chars:
                break
            run += 1
        self._run = run

    def push(self, action: ActionRecord, report: bool = True) -> Anomaly | None:
        """Take the next action; an ``empty`` anomaly when its output completes a run."""
        return self.step(action, action.tool, action.fingerprint, action.output_len, action.error, report)

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
        if length is None or tool in self._exempt:
            return None
        if length > self._max_chars:
            self._run = 0
            return None
        run = self._run = self._run + 1
        if not report or run < self._threshold:
            return None
        return self._det._report(action, run, action.tick, action.at)


# --------------------------------------------------------------------------
# error_rate
# --------------------------------------------------------------------------


@dataclass(frozen=True)
class ErrorRate:
    """``error_rate``: errors / W >= T over the last W actions, once W actions exist."""

    window: int = 10
    threshold: float = 0.5
    exempt: Collection[str] = frozenset()
    kind: str = field(default="error_rate", init=False, repr=False)

    def __post_init__(self) -> None:
        _need_int("error_rate", "window", self.window, 1)
        t = self.threshold
        if isinstance(t, bool) or not isinstance(t, int | float) or not 0 < t <= 1:
            raise ConfigError(f"error_rate: threshold must be a number in (0, 1], got {t!r}")
        object.__setattr__(self, "exempt", _frozen(self.exempt))

    @property
    def history_needed(self) -> int:
        """Past actions this detector needs to see."""
        return self.window

    def check(self, history: History, now: datetime) -> Anomaly | None:
        """Whether the newest action failed and brought the failure rate to T or more."""
        last = history.last
        if last is None or last.tool in self.exempt or last.error is None:
            return None
        seq = [a for a in history.actions if a.tool not in self.exempt][-self.window :]
        if len(seq) < self.window:
            return None
        failing = Counter(a.tool for a in seq if a.error is not None)
        if not self._trips(sum(failing.values())):
            return None
        return self._report(last, failing, history.tick, now)

    def tracker(self, history: History) -> ActionTracker:
        """An incremental ``check`` seeded from ``history``."""
        return _ErrorRateTracker(self, history)

    def _trips(self, errors: int) -> bool:
        # The rate as a quotient, never errors >= T * W: 0.3 * 10 is 3.0000000000000004.
        return errors / self.window >= self.threshold

    def _report(self, action: ActionView, failing: Mapping[str, int], tick: int, at: datetime) -> Anomaly:
        errors = sum(failing.values())
        rate = errors / self.window
        tools = sorted(failing, key=lambda t: (-failing[t], t))
        worst = tools[0]
        return _anomaly(
            "error_rate",
            f"{errors} of {self.window} actions failed ({rate:.0%}), "
            f"last: {action.tool}: {clip(action.error, 120)}",
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
                "avoid": f"{worst} (failed {_times(failing[worst])} in the last {self.window} actions)",
            },
        )


class _ErrorRateTracker:
    """The errors among the last W actions (position and tool), with counts per tool.

    Only errors are kept: a success moves the position on and, at most, lets
    the oldest error leave the window, so the common push does almost nothing.
    """

    __slots__ = ("_det", "_errors", "_exempt", "_failing", "_n", "_window")

    def __init__(self, det: ErrorRate, history: History) -> None:
        self._det = det
        self._exempt = det.exempt
        self._window = det.window
        self._n = 0  # actions seen (exempt ones left out): the position of the newest
        self._errors: deque[tuple[int, str]] = deque()
        self._failing: dict[str, int] = {}
        for action in _tail(history.actions, det.window, det.exempt):
            self.step(action, action.tool, action.fingerprint, action.output_len, action.error, False)

    def push(self, action: ActionRecord, report: bool = True) -> Anomaly | None:
        """Take the next action; an ``error_rate`` anomaly when it fails and the rate is reached."""
        return self.step(action, action.tool, action.fingerprint, action.output_len, action.error, report)

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
        n = self._n = self._n + 1
        errors = self._errors
        # Positions are distinct and rise by one per push, so at most one error leaves.
        if errors and errors[0][0] <= n - self._window:
            gone = errors.popleft()[1]
            left = self._failing[gone] - 1
            if left:
                self._failing[gone] = left
            else:
                del self._failing[gone]
        if error is None:
            return None
        errors.append((n, tool))
        self._failing[tool] = self._failing.get(tool, 0) + 1
        if not report or n < self._window or not self._det._trips(len(errors)):
            return None
        return self._det._report(action, self._failing, action.tick, action.at)


# --------------------------------------------------------------------------
# no_progress
# --------------------------------------------------------------------------


@dataclass(frozen=True)
class NoProgress:
    """``no_progress``: the last N progress samples differ by less than D (max - min).

    Samples whose metric failed (value None) are left out.
    """

    samples: int = 5
    min_delta: float = 0.01
    kind: str = field(default="no_progress", init=False, repr=False)
    scope: Scope = field(default="progress", init=False, repr=False)

    def __post_init__(self) -> None:
        _need_int("no_progress", "samples", self.samples, 2)
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
        return _NoProgressTracker(self, history)

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
        return _anomaly(
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


class _NoProgressTracker:
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


# The trackers whose push takes report=False (move on, build no Anomaly).
_LAZY_TRACKERS = (_RepeatTracker, _LoopTracker, _EmptyTracker, _ErrorRateTracker, _NoProgressTracker)

BuiltinStep = Callable[[ActionView, str, str, "int | None", "str | None", bool], "Anomaly | None"]
"""``step(action, tool, fingerprint, output_len, error, report)``: the built-in action
trackers' push with the action's fields passed in. :class:`~heartbeat.monitor.Monitor`
has them at hand, and reading them again from the model in each tracker would cost
more than the tracking itself."""

_STEP_TRACKERS = (_RepeatTracker, _LoopTracker, _EmptyTracker, _ErrorRateTracker)


# --------------------------------------------------------------------------
# Building the configured set
# --------------------------------------------------------------------------


def load_detector(spec: str, *, search_path: Path | None = None) -> Detector:
    """Load a custom detector named ``"module:attr"``; a class is instantiated with no arguments."""
    obj = load_object(spec, what="detector", search_path=search_path)
    if isinstance(obj, type):
        try:
            obj = obj()
        except Exception as exc:  # the user's constructor: one config line, any error
            raise ConfigError(f"detector {spec!r}: {obj.__name__}() failed: {exc!r}") from None
    try:
        return as_detector(obj)
    except TypeError as exc:
        raise ConfigError(f"detector {spec!r}: {exc}") from None


def build_detectors(cfg: DetectorsConfig, *, search_path: Path | None = None) -> list[Detector]:
    """The enabled built-in detectors in a fixed order, then the custom ones from ``cfg.custom``."""
    exempt = frozenset(cfg.exempt)
    found: list[Detector] = []
    if cfg.repeat.enabled:
        found.append(
            Repeat(cfg.repeat.threshold, cfg.repeat.tools, exempt=exempt, polling=frozenset(cfg.polling))
        )
    if cfg.loop.enabled:
        found.append(Loop(cfg.loop.window, cfg.loop.repeats, exempt=exempt | set(cfg.loop.exempt)))
    if cfg.empty.enabled:
        found.append(
            # A polling tool's short status ("running") is its normal answer, not an empty one.
            Empty(
                cfg.empty.threshold,
                cfg.empty.max_chars,
                exempt=exempt | set(cfg.empty.exempt) | set(cfg.polling),
            )
        )
    if cfg.error_rate.enabled:
        found.append(ErrorRate(cfg.error_rate.window, cfg.error_rate.threshold, exempt=exempt))
    if cfg.no_progress.enabled:
        found.append(NoProgress(cfg.no_progress.samples, cfg.no_progress.min_delta))
    found.extend(load_detector(spec, search_path=search_path) for spec in cfg.custom)
    return found
