"""Why an agent must not go on, as its files say it, read without opening a heartbeat.

A long-running process (a :class:`~heartbeat.integrations.session.Session`, the
MCP proxy) asks before each call: the KILL file (read from disk every time),
the fleet stop (its latest reading, never waited for once there is one), a ``heartbeat pause``
under way (it waits for the lock the process holds), or the status
``state.json`` holds (a pause saved, a human awaited). One reading each, no
lock taken, nothing written; :func:`state_mark` tells when ``state.json``
was written again, so a caller reads the status only then.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

from ..base.errors import HeartbeatError
from ..core.models import Status
from ..state.killswitch import fleet_stop_name, stopped_by
from ..tick.control import pause_requested
from ..tick.sharedstop import KilledWhileReading
from .stops import Stop, pausing

if TYPE_CHECKING:
    from ..tick.agent import Agent

__all__ = ["Mark", "kill_found", "pause_stop", "saved_stop", "standing_stop", "state_mark"]

Mark = tuple[int, int, int]
"""What changes when ``state.json`` is written: its (inode, mtime in ns, size); zeros when missing."""


def kill_found(hb: Agent) -> Stop | None:
    """The KILL file's stop, else the fleet stop's (its latest reading; read now when there is none
    yet), else None; said as every part says it (:func:`~heartbeat.state.killswitch.stopped_by`)."""
    reason = hb.kill.reason()
    if reason is not None:
        return Stop("killed", stopped_by(hb.kill.name, reason), 3)
    fleet = hb.shared_stop
    if fleet is not None:
        # The latest reading, never waited for (read at most once a second, as the watchdog does);
        # but before this process has any, "none yet" is no "go on": the first ask reads it (an
        # adapter's first model call, before any heartbeat opened and read it), up to the stop's
        # deadline, so a caller on an event loop asks from a worker thread (Guard.offload). KILL
        # is looked at meanwhile: a slow stop service never holds it off.
        try:
            reason = fleet.latest() if fleet.read_yet else fleet.current(killed=hb.kill.reason)
        except KilledWhileReading as exc:
            return Stop("killed", stopped_by(hb.kill.name, exc.reason), 3)
        if reason is not None:
            return Stop("killed", stopped_by(fleet_stop_name(fleet.where), reason), 3)
    return None


def pause_stop(hb: Agent) -> Stop | None:
    """A ``heartbeat pause`` that waits for the lock now, as a Stop, else None (one stat)."""
    asked = pause_requested(hb)
    return None if asked is None else pausing(asked)


def saved_stop(hb: Agent) -> Stop | None:
    """The status ``state.json`` holds when it says to wait (paused, needs_human), else None.

    Fails closed: a state that cannot be read is an ``error`` Stop (whether calls may go on
    cannot be told, so they may not).
    """
    try:
        state = hb.store.load()
    except (HeartbeatError, OSError) as exc:
        return Stop("error", hb.redact(str(exc)), 2)
    if state.status is Status.PAUSED:
        return Stop("paused", f"paused: {state.status_reason or 'by hand'}", 0)
    if state.status is Status.NEEDS_HUMAN:
        return Stop("needs_human", f"waiting for a human; see {hb.store.escalation_path}", 4)
    return None


def standing_stop(hb: Agent) -> Stop | None:
    """A pause under way, else the status ``state.json`` holds: why not to go on, else None."""
    return pause_stop(hb) or saved_stop(hb)


def state_mark(hb: Agent) -> Mark:
    """What changes when ``state.json`` is written (``resume``, ``pause``, a tick)."""
    try:
        info = os.stat(hb.store.state_path)
    except OSError:
        return (0, 0, 0)
    return (info.st_ino, info.st_mtime_ns, info.st_size)
