"""Sessions closed at interpreter exit: each open heartbeat ended and saved.

A :class:`~heartbeat.integrations.session.Session` runs its heartbeats on a
daemon thread, so a forgotten ``close()`` never keeps a process alive; the
price is that such a thread dies with the interpreter, its heartbeat unsaved.
Each session that starts a worker is kept here (weakly: a session dropped
early is gone) and closed from an :mod:`atexit` hook.
"""

from __future__ import annotations

import atexit
import weakref
from typing import Protocol

__all__ = ["close_at_exit"]


class _Closable(Protocol):
    def close(self) -> object: ...


_LIVE: weakref.WeakSet[_Closable] = weakref.WeakSet()


def close_at_exit(session: _Closable) -> None:
    """Close ``session`` at interpreter exit (if it is still alive then)."""
    _LIVE.add(session)


@atexit.register
def _close_all() -> None:
    for session in list(_LIVE):
        try:
            session.close()
        except Exception:  # exiting anyway: one agent's broken folder must not block the others
            continue
