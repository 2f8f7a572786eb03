"""How ``heartbeat mcp-proxy`` ends: its calls under way, and SIGTERM/SIGINT taken outside what they stop.

A Python signal handler runs in the proxy's own thread, between two bytecodes
of whatever that thread was doing, and that may be recording a call: holding
the session's condition, which the heartbeat's worker needs to end. A handler
that recorded and closed the session there waited for the worker, which
waited for the code under the handler: the proxy never exited, and an
operator's ``kill`` did nothing. So the handler (:meth:`Leaver.on_signal`)
sets a flag and writes one byte to a pipe: no lock, nothing that can block.
A thread of its own then does what :func:`leave` says: record the calls
still running (interrupted: the server may have run them), end the open
heartbeat (saved, journaled) and exit.

Should that not be done within :data:`LEAVE_SECONDS` (the proxy's thread
holds the session for good: a detector plug-in that hangs), the proxy exits
all the same, once what no save will keep is journaled without a lock: the
open heartbeat's calls and spend, the calls running and the ones being
recorded, each marked ``after_stop: interrupted``. A second signal exits at
once. An operator's ``kill`` always ends the proxy.

The proxy also leaves when its server exits: :class:`EndWatch` tells it as the
server's output ends.
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
import threading
from collections.abc import Callable
from types import FrameType
from typing import Any, NoReturn, Self

import anyio

from ..tick.control import note_interrupted
from ..tick.late import journal_unsaved, note_after_stop
from .session import Session, Stopped

__all__ = ["LEAVE_SECONDS", "Call", "EndWatch", "InFlight", "Leaver", "leave"]

LEAVE_SECONDS = 2.0
"""How long the proxy may take to record the calls under way and save the open heartbeat once it
must exit (a few milliseconds as a rule), before it journals what is left without a lock and exits."""

Call = tuple[str, dict[str, Any] | None, str | None, str | None]
"""A tool call under way: its name and arguments, and once it ended, its output and error."""


class InFlight:
    """The proxy's tool calls under way: running on the server, or ended and being recorded.

    Each call is recorded once, by whoever claims it first: the proxy's thread when the call ends
    (:meth:`claim`), or a proxy that must exit (:meth:`take`), which records it as interrupted.
    """

    def __init__(self) -> None:
        # Taken only for a dict operation, never by a signal handler, never around a recording.
        self._lock = threading.Lock()
        self._running: dict[int, Call] = {}
        self._recording: dict[int, Call] = {}
        self.closed = False
        """Set once the proxy must exit: no further call is forwarded (a plain flag a handler may set)."""

    def start(self, key: int, name: str, arguments: dict[str, Any] | None) -> None:
        """A call goes to the server."""
        with self._lock:
            self._running[key] = (name, arguments, None, None)

    def claim(self, key: int, output: str | None, error: str | None) -> bool:
        """The call ended: True when the caller records it now, False when an exiting proxy took it."""
        with self._lock:
            call = self._running.pop(key, None)
            if call is None:
                return False
            self._recording[key] = (call[0], call[1], output, error)
            return True

    def done(self, key: int) -> None:
        """The call is recorded, or needs no record (not a finished call)."""
        with self._lock:
            self._running.pop(key, None)
            self._recording.pop(key, None)

    def take(self) -> list[Call]:
        """The calls still running, taken by a proxy that must exit: it records them, none else."""
        with self._lock:
            calls, self._running = list(self._running.values()), {}
        return calls

    def being_recorded(self) -> list[Call]:
        """The calls that ended and are being recorded now (for a proxy whose recording hangs)."""
        with self._lock:
            return list(self._recording.values())


def leave(session: Session, in_flight: InFlight, code: int, why: str, message: str) -> NoReturn:
    """End the proxy: say ``message`` (a line on stderr), record the calls still running as
    interrupted by ``why``, end the open heartbeat, exit ``code``; within :data:`LEAVE_SECONDS`,
    else as the module docstring says."""
    in_flight.closed = True
    left: list[Call] | None = None  # the running calls this thread has not recorded yet, once taken
    finished = threading.Event()

    def abandon() -> None:
        if finished.wait(LEAVE_SECONDS):
            return
        calls = in_flight.take() + (left or []) + in_flight.being_recorded()
        # Itself bounded: whatever the journal does, the process exits.
        emergency = threading.Thread(target=_journal_left, args=(session, calls, why), daemon=True)
        emergency.start()
        emergency.join(LEAVE_SECONDS)  # not the main thread: no signal's handler can cut this join
        os._exit(code)

    threading.Thread(target=abandon, name="heartbeat-mcp-proxy-deadline", daemon=True).start()
    try:
        print(message, file=sys.stderr, flush=True)
        left = in_flight.take()
        for name, arguments, _, _ in list(left):
            with contextlib.suppress(Stopped):  # no heartbeat could take it: journaled all the same
                session.record(name, arguments, error=f"{why} while the call ran (it may have run)")
            left.pop(0)
        session.close()
    finally:
        finished.set()
        os._exit(code)


def _journal_left(session: Session, calls: list[Call], why: str) -> None:
    """What no save will keep, journaled without a lock (the proxy's thread may hold any)."""
    hb = session.heartbeat
    try:
        note_interrupted(hb, why)
        journal_unsaved(hb, session.unsaved, "interrupted")
        for name, arguments, output, error in calls:
            if output is None and error is None:  # still running on the server
                error = f"{why} while the call ran (it may have run)"
            note_after_stop(hb, name, arguments, output, error, 0.0, "interrupted")
    except Exception:  # exiting in an emergency: nothing here may keep the process alive
        return


class Leaver:
    """SIGTERM and SIGINT, taken outside the code they interrupt: :func:`leave` runs in a thread of
    its own (see the module docstring)."""

    def __init__(self, session: Session, in_flight: InFlight) -> None:
        self.session, self.in_flight = session, in_flight
        self._signum = 0
        self._read, self._write = os.pipe()
        threading.Thread(target=self._wait, name="heartbeat-mcp-proxy-stop", daemon=True).start()

    def install(self) -> None:
        """Take SIGTERM and SIGINT (the main thread's handlers)."""
        for signum in (signal.SIGTERM, signal.SIGINT):
            signal.signal(signum, self.on_signal)

    def on_signal(self, signum: int, frame: FrameType | None) -> None:
        """The handler: a flag and one byte down the pipe; nothing that takes a lock or may block."""
        if self._signum:  # a second signal: the operator insists
            os._exit(0)
        self._signum = signum
        self.in_flight.closed = True
        os.write(self._write, b"\0")

    def _wait(self) -> None:
        """The thread: wait for a signal, then leave (exit 0)."""
        os.read(self._read, 1)
        name = signal.Signals(self._signum).name
        said = f"heartbeat: mcp-proxy stopping ({name}): recording the calls under way"
        leave(self.session, self.in_flight, 0, f"the proxy was stopped ({name})", said)


class EndWatch:
    """The server's message stream as it is, telling ``on_end`` when it ends: the server exited, and the
    proxy leaves with it (:func:`leave`)."""

    def __init__(self, inner: Any, on_end: Callable[[], None]) -> None:
        self._inner = inner
        self._on_end = on_end

    @property
    def last_context(self) -> Any:
        """The sender's context, as the SDK's own context-aware streams carry it."""
        return getattr(self._inner, "last_context", None)

    async def receive(self) -> Any:
        """The next message; at the end of the stream, tell ``on_end`` first."""
        try:
            return await self._inner.receive()
        except (anyio.EndOfStream, anyio.ClosedResourceError):
            self._on_end()
            raise

    async def aclose(self) -> None:
        """Close the stream."""
        await self._inner.aclose()

    def __aiter__(self) -> Self:
        return self

    async def __anext__(self) -> Any:
        try:
            return await self.receive()
        except (anyio.EndOfStream, anyio.ClosedResourceError):
            raise StopAsyncIteration from None

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()
