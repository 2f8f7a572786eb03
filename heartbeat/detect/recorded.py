"""A recorded action as the :class:`~heartbeat.detect.monitor.Monitor` keeps it; the keys a journal keeps.

:class:`LightAction` is the record while every detector is a built-in one;
:func:`as_record` builds the :class:`~heartbeat.core.models.ActionRecord` when the
history is read. :func:`journal_keys` is what an action's journal event holds
besides its index, tool, summary, output length, error and cost: the keys the
Monitor derived from its arguments and output (digests), and
:func:`keyed_record` builds a record back from them, so a replayed journal
feeds the detectors exactly what they saw live.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, MutableSequence
from datetime import datetime
from typing import Any, cast

from ..core.models import ActionRecord, clip
from .detectors import ActionView
from .detectors.contract import construct

__all__ = [
    "KEY_FIELDS",
    "RECORD_KEYS",
    "LightAction",
    "as_record",
    "build_records",
    "check_keys",
    "cost_of",
    "journal_keys",
    "keyed_record",
    "need_aware",
]


class LightAction:
    """A recorded action, before it is needed as an :class:`ActionRecord`.

    The same fields in the same order. While every detector is a built-in one
    (they read only these attributes), the Monitor records these: an object with
    slots costs a fraction of a pydantic model, and the model is built when the
    history is read (the runner reads it once per tick, the detector benchmark
    and replay never). A custom detector gets real ActionRecords from the start.

    Slots, not a NamedTuple: the detectors read a few dozen fields of every
    action, and a slot is read in a third of the time a NamedTuple's field takes.
    """

    __slots__ = (
        *("index", "tick", "at", "tool", "fingerprint", "summary", "output_len", "error", "cost"),
        *("shape", "result", "failure", "facts"),
    )
    index: int
    tick: int
    at: datetime
    tool: str
    fingerprint: str
    summary: str
    output_len: int | None
    error: str | None
    cost: float
    shape: str | None
    result: str | None
    failure: str | None
    facts: str | None

    def __init__(
        self,
        index: int,
        tick: int,
        at: datetime,
        tool: str,
        fingerprint: str,
        summary: str,
        output_len: int | None,
        error: str | None,
        cost: float,
        shape: str | None,
        result: str | None,
        failure: str | None,
        facts: str | None,
    ) -> None:
        self.index = index
        self.tick = tick
        self.at = at
        self.tool = tool
        self.fingerprint = fingerprint
        self.summary = summary
        self.output_len = output_len
        self.error = error
        self.cost = cost
        self.shape = shape
        self.result = result
        self.failure = failure
        self.facts = facts

    def __repr__(self) -> str:
        fields = ", ".join(f"{name}={getattr(self, name)!r}" for name in RECORD_KEYS)
        return f"LightAction({fields})"


RECORD_KEYS: tuple[str, ...] = LightAction.__slots__
KEY_FIELDS: tuple[str, ...] = tuple(
    name
    for name in RECORD_KEYS
    if name not in ("index", "tick", "at", "tool", "summary", "output_len", "error", "cost")
)
"""The fields of a record that a journal's action event adds: ``fingerprint``, ``shape``, ``result``,
``failure``, ``facts``."""


def as_record(action: ActionRecord | LightAction) -> ActionRecord:
    """``action`` as an ActionRecord (built without validation: its fields were checked)."""
    if action.__class__ is not LightAction:
        return cast(ActionRecord, action)
    return construct(ActionRecord, {name: getattr(action, name) for name in RECORD_KEYS})


def build_records(history: MutableSequence[ActionRecord | LightAction]) -> None:
    """Build the LightActions of ``history`` as ActionRecords, in place (only its newest can be)."""
    # Each read builds all there are, and records append: the light ones are the newest.
    at = len(history)
    while at and history[at - 1].__class__ is LightAction:
        at -= 1
    for i in range(at, len(history)):
        history[i] = as_record(history[i])


def journal_keys(action: ActionView) -> dict[str, Any]:
    """The keys of a recorded action the journal keeps (``fingerprint``, ``shape``, ``result``,
    ``failure``, ``facts``: digests)."""
    return {name: getattr(action, name) for name in KEY_FIELDS}


def check_keys(keys: Mapping[str, Any]) -> None:
    """ValueError unless ``keys`` are what heartbeat computes: digests (text; only ``fingerprint``
    required) and the output's length (a count, or None)."""
    fp = keys.get("fingerprint")
    if not isinstance(fp, str) or not fp:
        raise ValueError(f"fingerprint must be non-empty text, not {fp!r}")
    length = keys.get("output_len")
    if length is not None and (isinstance(length, bool) or not isinstance(length, int) or length < 0):
        raise ValueError(f"output_len must be a whole number >= 0 or null, not {length!r}")
    for name in KEY_FIELDS:
        value = keys.get(name)
        if value is not None and not isinstance(value, str):
            raise ValueError(f"{name} must be text or null, not {value!r}")


def keyed_record(
    tool: str,
    keys: Mapping[str, Any],
    *,
    index: int,
    tick: int,
    at: datetime,
    error: str | None,
    cost: float,
    light: bool,
) -> ActionRecord | LightAction:
    """A record from the keys computed when the action happened (``fingerprint``, ``summary``,
    ``output_len`` and the other :data:`KEY_FIELDS`); ValueError when they cannot be one."""
    if not isinstance(tool, str) or not tool:
        raise TypeError(f"tool must be a non-empty str, not {tool!r}")
    cost = cost_of(cost)
    check_keys(keys)
    fields: dict[str, Any] = {name: keys.get(name) for name in RECORD_KEYS}
    fields.update(
        index=index,
        tick=tick,
        at=at,
        tool=tool,
        summary=str(keys.get("summary") or tool),
        error=clip(str(error)) if error else None,
        cost=cost,
    )
    if light:
        return LightAction(*[fields[name] for name in RECORD_KEYS])
    return construct(ActionRecord, fields)


def need_aware(now: datetime) -> None:
    """ValueError unless ``now`` is a timezone-aware datetime."""
    if not isinstance(now, datetime) or now.tzinfo is None or now.utcoffset() is None:
        raise ValueError(f"now must be a timezone-aware datetime, not {now!r}")


def cost_of(cost: object) -> float:
    """``cost`` as a float, or ValueError when it is not a finite number >= 0."""
    if isinstance(cost, bool) or not isinstance(cost, int | float) or not 0 <= cost < math.inf:
        raise ValueError(f"cost must be a finite number >= 0, not {cost!r}")
    return float(cost)
