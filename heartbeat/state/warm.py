"""What an in-process heartbeat keeps from one tick to the next, and when it may use it.

``heartbeat run``, a scheduler or a test calls :meth:`Heartbeat.tick` many
times in one process. Every tick reads ``state.json`` under the lock as
before; but when the file still holds, byte for byte, what this process
saved at the end of its last tick (no human, ``resume``, ``pause`` or other
process wrote it since), parsing it again and seeding the detectors again
from its history would rebuild exactly what the process already holds. Then
the tick reuses them: the :class:`~heartbeat.detect.monitor.Monitor` (started anew
with ``start_tick(reseed=True)``, as replay does) and, when it is provably
what a fresh load would give, the state object itself.

The rules that keep reuse indistinguishable from a cold tick:

* The cache is *taken out* at the start of every tick (:meth:`WarmStart.take`)
  and put back only after a successful save, so a tick that fails or is
  abandoned half way never leaves a stale one.
* The saved bytes must be the state as it is in memory (``Saved.exact``: no
  secret was masked out of them; the file holds ``***`` where memory holds the
  secret, so the two differ).
* The Monitor must have seen nothing since (its action count is still the
  saved one: a step that kept its context and records later is caught).
* The state object is reused only when a JSON round trip could not change
  it: a tick that ran cleanly with no anomaly, no recovery, no escalation and
  no notice, whose new values are plain (``data`` made only of dict with str
  keys, list, str, int, finite float, bool and None, copied so a step that
  kept the old dict cannot reach the cached one; the new actions' texts plain
  ``str``; its times in UTC). Anything else is loaded from the file as usual.

A state folder driven by ``heartbeat tick`` from cron never sees a cache: each
process ticks once, and a Heartbeat readies one only from its second tick on
(the first would re-seed a Monitor for a tick that may never come), so the
warm start begins at its third.
"""

from __future__ import annotations

import math
from datetime import UTC, date, datetime
from typing import Any

from ..core.models import AgentState, Status
from ..core.settle import Settlement
from ..detect.monitor import Monitor
from .store import Saved, StateStore

__all__ = ["Warm", "WarmStart", "plain_copy"]

_SCALARS = (str, int, bool, type(None))


class _NotPlain(Exception):
    """Raised inside :func:`plain_copy` at the first value JSON would change."""


def plain_copy(value: Any) -> Any:
    """A deep copy of a JSON value as ``json.loads`` would build it; ValueError if it is not one.

    Exact types only (a tuple, a str subclass, a set, a non-str key, NaN all
    come back different from a JSON round trip, so they are refused).
    """
    try:
        return _copy(value, 0)
    except (_NotPlain, RecursionError):
        raise ValueError("not a plain JSON value") from None


def _copy(value: Any, depth: int) -> Any:
    kind = value.__class__
    if kind in _SCALARS:
        return value
    if kind is float:
        if not math.isfinite(value):
            raise _NotPlain
        return value
    if depth > 200:  # deeper than a fresh load would take without a fight: let it load
        raise _NotPlain
    if kind is dict:
        copied = {}
        for key, item in value.items():
            if key.__class__ is not str:
                raise _NotPlain
            copied[key] = _copy(item, depth + 1)
        return copied
    if kind is list:
        return [_copy(item, depth + 1) for item in value]
    raise _NotPlain


def _utc(moment: datetime | None) -> bool:
    return moment is None or moment.tzinfo is UTC


def _text(text: str | None) -> bool:
    return text is None or text.__class__ is str


class Warm:
    """What one tick left for the next: the bytes it saved, its Monitor, maybe its state."""

    # A plain class, not a dataclass: building one of those at import costs a cron tick 0.2 ms.
    __slots__ = ("detectors", "monitor", "saved", "state")

    def __init__(self, saved: Saved, monitor: Monitor, detectors: object, state: AgentState | None) -> None:
        self.saved = saved
        self.monitor = monitor
        self.detectors = detectors
        """The Heartbeat's detectors the Monitor was built with (a swapped list starts cold)."""
        self.state = state

    def load(self, store: StateStore, detectors: object) -> tuple[AgentState, Monitor | None]:
        """The state (``store`` holds the lock), and this Monitor if it may go on (module docs)."""
        state, unchanged = store.reload(self.saved, self.state)
        monitor = self.monitor
        if (
            unchanged
            and self.detectors is detectors
            and monitor.actions_total == state.actions_total  # nothing recorded since
            and monitor.tick == state.ticks + 1  # readied for the tick about to run
        ):
            return state, monitor
        return state, None


class WarmStart:
    """One Heartbeat's cache: :meth:`prepare` and :meth:`keep` around a save, :meth:`take` at the next."""

    __slots__ = ("_warm",)

    def __init__(self) -> None:
        self._warm: Warm | None = None

    @property
    def kept(self) -> Warm | None:
        """What is kept right now (None: the next tick starts cold)."""
        return self._warm

    def take(self) -> Warm | None:
        """Take the cache out (it is gone until the next :meth:`keep`)."""
        warm, self._warm = self._warm, None
        return warm

    def clear(self) -> None:
        """Forget the cache."""
        self._warm = None

    def prepare(self, settled: Settlement, monitor: Monitor, detectors: object) -> Warm | None:
        """Before the save: get ``monitor`` (and maybe ``settled.state``) ready for the next tick.

        Done before the fsyncs of the save put the process to sleep. The
        Monitor is started for the next tick now (re-seeded, as a fresh one
        would be); nothing is kept until :meth:`keep` is handed what the save
        wrote. The state is readied only after a clean tick: it ran its step
        with outcome ``ran``, exit 0, no anomaly and no notice.
        """
        state = settled.state
        if not settled.save or monitor.actions_total != state.actions_total:
            return None
        clean = settled.outcome == "ran" and settled.exit_code == 0
        clean = clean and not (settled.anomalies or settled.notices or state.notices)
        data = _round_trip_data(state, monitor.tick) if clean else None
        if data is not None:
            # Copies of its own: a step that kept the old context cannot reach the cached state.
            state.data, state.budget = data, state.budget.model_copy()
        monitor.start_tick(monitor.tick + 1, reseed=True)
        return Warm(Saved(b"", False), monitor, detectors, state if data is not None else None)

    def keep(self, ready: Warm | None, saved: Saved | None, *, changed: bool) -> None:
        """After the save: keep what :meth:`prepare` readied, with ``saved``, what the save wrote.

        ``changed`` says the save had to change the state to write it (then
        only the Monitor is kept).
        """
        self._warm = None
        if ready is None or saved is None or not saved.exact:
            return
        self._warm = Warm(saved, ready.monitor, ready.detectors, None if changed else ready.state)


def _round_trip_data(state: AgentState, tick: int) -> dict[str, Any] | None:
    """A plain copy of ``state.data`` if loading the saved ``state`` would give equal values, else None.

    What earlier ticks left was checked by them or came from a load; only
    what tick ``tick`` wrote needs a look (see the module docs).
    """
    if (
        state.status is not Status.ACTIVE
        or state.recovery is not None
        or state.escalation is not None
        or state.notices
        or state.stuck_streak
        or not _utc(state.last_tick_at)
        or not (_text(state.instructions) and _text(state.status_reason))
        or (state.budget.day is not None and state.budget.day.__class__ is not date)
        or any(a.tick == tick for a in state.anomalies)
    ):
        return None
    for record in reversed(state.history):
        if record.tick != tick:
            break
        if not (_utc(record.at) and record.tool.__class__ is str and _text(record.error)):
            return None
    for sample in reversed(state.progress):
        if sample.tick != tick:
            break
        if not (_utc(sample.at) and _text(sample.error)):
            return None
    try:
        data: dict[str, Any] = plain_copy(state.data)
    except ValueError:
        return None
    return data
