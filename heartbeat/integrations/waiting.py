"""What a Session knows of its agent waiting (paused, a human awaited), as ``state.json`` says it.

Between its heartbeats a :class:`~heartbeat.integrations.session.Session` holds
no lock, and another process may write ``state.json`` (a ``heartbeat pause``,
a ``resume``, a ``tick``). Reading and validating the file before every call
would cost each call a load; so :class:`Waiting` remembers what the session
last learnt (the status its last heartbeat ended with, or the one it read)
together with the file's :data:`~heartbeat.integrations.filestops.Mark`, and
reads the file again only once it was written since. A state that cannot be
read fails closed (an ``error`` stop) and is read again at the next call.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .filestops import Mark, saved_stop, state_mark
from .stops import Stop, stop_of

if TYPE_CHECKING:
    from ..core.result import TickResult
    from ..tick.agent import Agent

__all__ = ["Waiting"]

_WAITS = ("needs_human", "paused")


class Waiting:
    """The stop ``state.json`` holds while the agent waits, as one session last knew the file."""

    def __init__(self, hb: Agent) -> None:
        self._hb = hb
        self._stop: Stop | None = None  # needs_human/paused, as seen at _stop_mark
        self._stop_mark: Mark | None = None
        self._seen_mark: Mark | None = None  # state.json as this session last knew it

    def known(self, mark: Mark) -> Stop | None:
        """The waiting stop last seen, when ``state.json`` is still as it was then (``mark``), else None."""
        return self._stop if self._stop is not None and mark == self._stop_mark else None

    def written_since(self, mark: Mark) -> bool:
        """Whether ``state.json`` (now at ``mark``) was written since this session last knew it."""
        return mark != self._seen_mark

    def still(self) -> Stop | None:
        """The waiting stop last seen while ``state.json`` is unchanged since; else None, and it is
        forgotten (a ``resume`` wrote the file: a tick reads it afresh)."""
        if self._stop is None:
            return None
        if state_mark(self._hb) == self._stop_mark:
            return self._stop
        self._stop = None
        return None

    def read(self, mark: Mark) -> Stop | None:
        """The status ``state.json`` holds now (``mark``) when it says to wait, remembered; fails closed."""
        stop = saved_stop(self._hb)
        if stop is None:
            self._seen_mark = mark
        elif stop.kind != "error":  # an unreadable state is read again at the next call
            self._stop, self._stop_mark = stop, mark
        return stop

    def learn(self, result: TickResult) -> None:
        """A heartbeat of the session ended with ``result``: the file is as it left it."""
        self._seen_mark = state_mark(self._hb)
        stop = stop_of(result)
        if stop is not None and stop.kind in _WAITS:
            self._stop, self._stop_mark = stop, state_mark(self._hb)
