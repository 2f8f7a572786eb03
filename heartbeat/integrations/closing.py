"""Sessions closed at interpreter exit: each open heartbeat ended and saved.

A :class:`~heartbeat.integrations.session.Session` runs its heartbeats on a
daemon thread, so a forgotten ``close()`` never keeps a process alive; the
price is that such a thread dies with the interpreter, its heartbeat unsaved.
Each session that starts a worker is kept here (weakly: a session dropped
early is gone) and closed from an :mod:`atexit` hook.

SIGTERM (``systemctl stop``, ``docker stop``, a pod ending) kills a Python
process without running that hook: the calls of the open heartbeat, which ran,
were lost. So while nothing else handles SIGTERM (its handler is the default),
the first session made in the main thread makes it end the process as
Ctrl-C does: :class:`SystemExit` (143) raised in the main thread, the hook run.
A process that handles SIGTERM itself (``heartbeat run``, the MCP proxy, a web
server) keeps its handler; a second SIGTERM ends the process at once. One whose
exit does not reach the hook (a framework's worker thread that is no daemon
holds the interpreter's shutdown for :data:`SHUTDOWN_SECONDS`, or the exit
never comes for :data:`EXIT_SECONDS`) has its sessions closed and is ended
with the signal's code all the same.

A heartbeat that ends because a signal ends the process (SIGTERM taken here, or
a signal's exception that cut a session's wait for its worker: :class:`Cut`)
begins no step and no measurement, and waits for none still running
(:attr:`heartbeat.tick.agent.Agent.signalled`): the process ends promptly.
"""

from __future__ import annotations

import _thread
import atexit
import contextlib
import os
import signal
import sys
import threading
import time
import weakref
from collections.abc import Iterator
from types import FrameType
from typing import NoReturn, Protocol

from ..tick.watchdog import end_after

__all__ = ["CLOSE_SECONDS", "EXIT_SECONDS", "SHUTDOWN_SECONDS", "Cut", "close_at_exit", "ending_on_signal"]

EXIT_SECONDS = 3.0
"""How long SIGTERM's exit may take to reach the exit hook before the sessions are closed and the
process is ended without it (a program that caught the ``SystemExit`` and went on)."""
SHUTDOWN_SECONDS = 0.3
"""How long the interpreter's shutdown may wait for threads that are no daemons before the sessions
are closed and the process is ended without it: PydanticAI's and the Agents SDK's AnyIO workers
held it for ever, before the exit hook ran (live round 60)."""
CLOSE_SECONDS = 10.0
"""How long the sessions' closing may take before the process is ended without it."""
_POLL = 0.02
_HOOKED: list[bool] = []  # the exit hook began closing the sessions (a plain list: no lock to take)


class _Closable(Protocol):
    def close(self) -> object: ...


_LIVE: weakref.WeakSet[_Closable] = weakref.WeakSet()
_SIGNALLED: list[str] = []  # why the process is ending, once SIGTERM came (a plain list: a handler sets it)


def close_at_exit(session: _Closable) -> None:
    """Close ``session`` at interpreter exit (if it is still alive then), SIGTERM included."""
    _LIVE.add(session)
    if threading.current_thread() is threading.main_thread():  # where a handler may be set
        with contextlib.suppress(ValueError, OSError):  # an embedded interpreter may refuse it
            if signal.getsignal(signal.SIGTERM) is signal.SIG_DFL:
                signal.signal(signal.SIGTERM, _terminated)


def _terminated(signum: int, frame: FrameType | None) -> NoReturn:
    """SIGTERM: exit as Ctrl-C would, through the hook below; a second one ends the process."""
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    _SIGNALLED.append("stopped by SIGTERM")
    # A raw thread: threading's own locks may be held by the code this handler interrupted.
    _thread.start_new_thread(_end_late, (128 + signum,))
    raise SystemExit(128 + signum)


def _end_late(code: int) -> None:
    """End the process with ``code`` if SIGTERM's exit does not reach the exit hook: within
    :data:`SHUTDOWN_SECONDS` of the interpreter's shutdown (the main thread stopped) or
    :data:`EXIT_SECONDS` of the signal, the sessions closed first; once the hook runs, within
    :data:`CLOSE_SECONDS` of it."""
    main, waited, shutdown = threading.main_thread(), 0.0, None
    while waited < EXIT_SECONDS and not _HOOKED:
        time.sleep(_POLL)
        waited += _POLL
        if not main.is_alive():  # the shutdown joins the threads that are no daemons, then the hook
            shutdown = waited if shutdown is None else shutdown
            if waited - shutdown >= SHUTDOWN_SECONDS:
                break
    if _HOOKED:  # the hook closes the sessions: a close that hangs is ended all the same
        end_after(CLOSE_SECONDS, code)
    # The bound of the close and of the flush below (a stream another thread holds blocks it).
    _thread.start_new_thread(end_after, (CLOSE_SECONDS, code))
    _close_all()
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(Exception):
            stream.flush()
    os._exit(code)


def ending_on_signal() -> str | None:
    """Why the process is ending, once the SIGTERM taken here came (``stopped by SIGTERM``), else None."""
    return _SIGNALLED[0] if _SIGNALLED else None


class Cut:
    """Why a signal ends the process, as one worker's tick of a session asks it (``Agent.signalled``):
    a signal's exception cut the session's wait for that worker (:meth:`noting`), or the session is
    closed while SIGTERM ends the process (:meth:`closing`); else None. Reset for each worker."""

    def __init__(self) -> None:
        self.reason: str | None = None

    def __call__(self) -> str | None:
        return self.reason

    def by(self, exc: BaseException) -> None:
        """``exc`` cut a wait of the main thread that nothing but a signal's handler interrupts:
        Ctrl-C's KeyboardInterrupt, SIGTERM's SystemExit, or what else a handler of its own raised."""
        if isinstance(exc, KeyboardInterrupt):
            self.reason = "stopped by SIGINT"
        else:
            self.reason = ending_on_signal() or f"stopped by a signal ({type(exc).__name__})"

    @contextlib.contextmanager
    def noting(self) -> Iterator[None]:
        """A wait for the worker: a BaseException that is no Exception cutting it is a signal's
        (:meth:`by`); an Exception is the wait's own (a thread that cannot be started)."""
        try:
            yield
        except BaseException as exc:
            if not isinstance(exc, Exception):
                self.by(exc)
            raise

    def closing(self) -> None:
        """The session is closed: while SIGTERM ends the process, that is why."""
        self.reason = self.reason or ending_on_signal()


@atexit.register
def _close_all() -> None:
    _HOOKED.append(True)
    for session in list(_LIVE):
        try:
            session.close()
        except Exception:  # exiting anyway: one agent's broken folder must not block the others
            continue
