"""Sessions closed at interpreter exit: each open heartbeat ended and saved.

A :class:`~heartbeat.integrations.session.Session` runs its heartbeats on a
daemon thread, so a forgotten ``close()`` never keeps a process alive; the
price is that such a thread dies with the interpreter, its heartbeat unsaved.
Each session that starts a worker is kept here (weakly: a session dropped
early is gone) and closed from an :mod:`atexit` hook.

SIGTERM (``systemctl stop``, ``docker stop``, a pod ending) kills a Python
process without running that hook: the calls of the open heartbeat, which ran,
were lost. So while nothing else handles SIGTERM (its handler is the default),
the first session started from the main thread makes it end the process as
Ctrl-C does: :class:`SystemExit` (143) raised in the main thread, the hook run.
A process that handles SIGTERM itself (``heartbeat run``, the MCP proxy, a web
server) keeps its handler; a second SIGTERM ends the process at once.
"""

from __future__ import annotations

import atexit
import contextlib
import signal
import threading
import weakref
from types import FrameType
from typing import NoReturn, Protocol

__all__ = ["close_at_exit"]


class _Closable(Protocol):
    def close(self) -> object: ...


_LIVE: weakref.WeakSet[_Closable] = weakref.WeakSet()


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
    raise SystemExit(128 + signum)


@atexit.register
def _close_all() -> None:
    for session in list(_LIVE):
        try:
            session.close()
        except Exception:  # exiting anyway: one agent's broken folder must not block the others
            continue
