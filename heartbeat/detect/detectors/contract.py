"""The detector contract: what a detector is handed, what it returns, and shared helpers.

A detector is anything with a ``kind`` and a ``check(history, now)`` that
returns an :class:`~heartbeat.core.models.Anomaly` or None; a plain function
``f(history, now)`` is accepted wherever a detector is. Every detector gets
the same context object, :class:`History`, so new needs add a field instead
of changing every signature.

``check`` answers one question: *did the newest entry of the history trip
this detector?* An action detector therefore returns None when the newest
action is one it does not look at. That is what makes "each kind once per
tick at the first action that tripped it" and replay exact.

A built-in detector also offers ``tracker(history)``: an object seeded from
a history whose ``step`` gives the same answer as ``check`` on the history
plus that entry, in time bounded by the window. ``check`` is the readable
reference the trackers are tested against.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Literal, Protocol, TypeVar, cast, runtime_checkable

from pydantic import BaseModel

from ...base.errors import ConfigError
from ...config.file import DETECTOR_BOUNDS
from ...core.models import STEP_ERROR_TOOL, ActionRecord, Anomaly, ProgressSample

__all__ = [
    "FIELDS",
    "ActionTracker",
    "ActionView",
    "BuiltinStep",
    "Detector",
    "FunctionDetector",
    "History",
    "ProgressTracker",
    "Scope",
    "StepTracker",
    "Windowed",
    "answered_alike",
    "as_detector",
    "attempted_nothing",
    "construct",
    "frozen_names",
    "heartbeat_bounds",
    "make_anomaly",
    "need_int",
    "need_number",
    "tail_of",
    "times",
    "tool_limits",
]

_M = TypeVar("_M", bound=BaseModel)
Scope = Literal["action", "progress"]


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

    :class:`~heartbeat.detect.monitor.Monitor` feeds them a lighter record of the same
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
    @property
    def shape(self) -> str | None: ...
    @property
    def result(self) -> str | None: ...
    @property
    def failure(self) -> str | None: ...
    @property
    def facts(self) -> str | None: ...


@runtime_checkable
class Detector(Protocol):
    """A stuck detector: ``check`` tells whether the newest history entry tripped it.

    An optional ``scope`` attribute says when the monitor runs it:
    ``"action"`` (the default) after each recorded action, ``"progress"``
    after each progress sample. An optional ``tracker(history)`` returning an
    :class:`ActionTracker` (or :class:`ProgressTracker`) lets the monitor
    skip building a :class:`History` per action. An optional ``stretch`` (an
    int) says its findings only guess from the calls that they had no effect,
    over the newest ``stretch`` actions: a rise of the progress metric within
    them overrules the finding (see :mod:`heartbeat.detect.evidence`).
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


class Windowed:
    """A detector whose findings speak for its last ``window`` actions (its ``stretch``)."""

    window: int

    @property
    def stretch(self) -> int:
        """The newest actions a finding speaks for: a rise of the metric within them overrules it."""
        return self.window


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


def frozen_names(names: Iterable[str]) -> frozenset[str]:
    """``names`` as a frozenset (itself when it is one already)."""
    return names if isinstance(names, frozenset) else frozenset(names)


def need_int(owner: str, name: str, value: object, minimum: int | None = None) -> None:
    """ConfigError unless ``value`` is a whole number within its bounds.

    The bounds of a configurable parameter come from
    :data:`heartbeat.config.file.DETECTOR_BOUNDS` (the one copy the config reads
    too); ``minimum`` raises the lower one (a window at least its threshold).
    """
    low, high = DETECTOR_BOUNDS.get(f"{owner}.{name.split('.')[0]}", (0, None))
    if minimum is not None:
        low = max(low, minimum)
    if (
        isinstance(value, bool)
        or not isinstance(value, int)
        or value < low
        or (high is not None and value > high)
    ):
        within = f">= {low}" if high is None else f"between {low} and {high}"
        raise ConfigError(f"{owner}: {name} must be an integer {within}, got {value!r}")


def tool_limits(owner: str, threshold: int, tools: Mapping[str, object]) -> dict[str, int | None]:
    """Per-tool thresholds from ``[detectors.repeat] tools``: never below ``threshold``, None for "off".

    A tool given its own repeat threshold polls legitimately, so the windowed
    detectors give it at least as much room as ``repeat`` does.
    """
    limits: dict[str, int | None] = {}
    for tool, value in tools.items():
        if value == "off":
            limits[tool] = None
        else:
            need_int("repeat", f"tools.{tool}", value)
            limits[tool] = max(threshold, int(cast(int, value)))
    return limits


def need_number(owner: str, name: str, value: object, low: float, high: float) -> None:
    """ConfigError unless ``value`` is a number with ``low < value <= high``."""
    if isinstance(value, bool) or not isinstance(value, int | float) or not low < value <= high:
        raise ConfigError(f"{owner}: {name} must be a number in ({low:g}, {high:g}], got {value!r}")


def construct(cls: type[_M], fields: dict[str, Any]) -> _M:
    """A model from values this package built and checked itself, skipping validation.

    What ``model_construct`` does, minus its per-field default handling:
    ``fields`` holds every field. Detectors run for every recorded action,
    and validation there would cost more than the detection; the tests
    check that constructed records and anomalies equal validated ones.
    """
    model = new_model(cls)
    set_dict(model, fields)
    # A set of its own, as validation gives: model_copy(update=...) adds to it.
    set_fields_set(model, set(FIELDS[cls]))
    set_extra(model, None)
    set_private(model, None)
    return model


new_model = BaseModel.__new__
# BaseModel's slots, set through their descriptors: object.__setattr__ would look each
# name up first. pydantic's own model_construct sets the same four.
set_dict = BaseModel.__dict__["__dict__"].__set__
set_fields_set = BaseModel.__dict__["__pydantic_fields_set__"].__set__
set_extra = BaseModel.__dict__["__pydantic_extra__"].__set__
set_private = BaseModel.__dict__["__pydantic_private__"].__set__
FIELDS: dict[type[BaseModel], frozenset[str]] = {
    cls: frozenset(cls.model_fields) for cls in (ActionRecord, Anomaly, ProgressSample)
}


def make_anomaly(
    kind: str,
    message: str,
    *,
    tick: int,
    at: datetime,
    action: ActionView | None,
    evidence: dict[str, Any],
    tool: str | None = None,
) -> Anomaly:
    """An anomaly of ``action`` (its tool unless ``tool`` is given), built without validation."""
    if at.tzinfo is None or at.utcoffset() is None:
        raise ValueError(f"now must be a timezone-aware datetime, not {at!r}")
    return construct(
        Anomaly,
        {
            "kind": kind,
            "message": message,
            "tick": tick,
            "action": action.index if action is not None else None,
            "at": at,
            "tool": tool if tool is not None else (action.tool if action is not None else None),
            "evidence": evidence,
            "again": False,
        },
    )


def attempted_nothing(action: ActionView) -> bool:
    """Whether ``action`` failed as a call without arguments: a harness's complaint about a malformed
    turn ("exactly one action, please"), a bare poll; the agent attempted nothing it could repeat.
    Not the runner's record of a step that raised: that is the agent failing, every heartbeat."""
    tool = action.tool
    return action.error is not None and tool != STEP_ERROR_TOOL and action.summary == f"{tool}()"


def tail_of(actions: Sequence[ActionView], n: int, exempt: Collection[str]) -> list[ActionView]:
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


def heartbeat_bounds(actions: Sequence[ActionView], tick: int) -> tuple[int, int]:
    """Where, among ``actions`` (kept in order, heartbeat ``tick`` the newest), the heartbeat
    before ``tick`` begins and where ``tick`` itself begins; the same two positions when there
    is no heartbeat before it."""
    first = len(actions)
    while first and actions[first - 1].tick == tick:
        first -= 1
    start = first
    while start and actions[start - 1].tick == actions[first - 1].tick:
        start -= 1
    return start, first


def answered_alike(action: ActionView, earlier: Sequence[ActionView]) -> int:
    """How many times running, back from the newest of ``earlier``, the call of ``action`` answered
    as ``action`` did (other calls between not counting)."""
    count = 0
    for before in reversed(earlier):
        if before.fingerprint == action.fingerprint:
            if before.result != action.result:
                break
            count += 1
    return count


def times(n: int) -> str:
    """``n`` in words for a message: once, twice, 3 times."""
    return "once" if n == 1 else "twice" if n == 2 else f"{n} times"


BuiltinStep = Callable[[ActionView, str, str, "int | None", "str | None", bool], "Anomaly | None"]
"""``step(action, tool, fingerprint, output_len, error, report)``: the built-in action
trackers' push with the action's fields passed in. :class:`~heartbeat.detect.monitor.Monitor`
has them at hand, and reading them again from the model in each tracker would cost
more than the tracking itself. With ``report=False`` the tracker moves on but builds
no Anomaly (its kind was already reported this tick)."""


class StepTracker:
    """Base of the built-in action trackers: :meth:`push` and seeding, both through their ``step``."""

    __slots__ = ()

    def step(
        self, action: ActionView, tool: str, fp: str, length: int | None, error: str | None, report: bool
    ) -> Anomaly | None:
        """The tracker's own rule (see :data:`BuiltinStep`)."""
        raise NotImplementedError

    def push(self, action: ActionRecord, report: bool = True) -> Anomaly | None:
        """Take the next action; this detector's anomaly when the action completes its pattern."""
        return self.step(action, action.tool, action.fingerprint, action.output_len, action.error, report)

    def seed(self, actions: Iterable[ActionView]) -> None:
        """Take ``actions`` (the kept history) without reporting."""
        step = self.step
        for action in actions:
            step(action, action.tool, action.fingerprint, action.output_len, action.error, False)
