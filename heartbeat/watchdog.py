"""The emergency stop while a step runs: a KILL that appears is acted on within half a second.

A step is the agent's code and may never return (a hung HTTP call, a
deadlock). :func:`watch` hands the KILL file of a running step to one
process-wide daemon thread that looks at it every :data:`POLL_SECONDS`; once
KILL has been there for :data:`GRACE_SECONDS` (time for a cooperative step
that reads ``ctx.killed`` to return), it calls the tick's ``on_kill`` from
that thread, and the tick abandons the step. Once no step has run for
:data:`LINGER_SECONDS` the thread sleeps on a condition, so an idle process
pays nothing; while ticks follow each other it keeps polling, so a tick pays
no thread wake-up.

A tick with a fleet stop (``[stop]``) has it watched too, through
:meth:`heartbeat.sharedstop.SharedStop.polled`: that ``reason()`` never
blocks and reads the switch (which may be a URL) at most once a second, so
the watchdog's pace is the KILL file's and the stop server sees no more.

:func:`signals_interrupt` turns SIGTERM and SIGINT into
:class:`TickInterrupted` for the length of a ``heartbeat tick``, so a signal
ends the tick through ``finally`` blocks (an ``--exec`` step's process group
is ended) instead of killing the process where it stands.
"""

from __future__ import annotations

import contextlib
import signal
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from types import FrameType
from typing import Protocol

__all__ = [
    "GRACE_SECONDS",
    "LINGER_SECONDS",
    "POLL_SECONDS",
    "TickInterrupted",
    "signals_interrupt",
    "unwatch",
    "watch",
]

POLL_SECONDS = 0.1
"""How often the KILL file of a running step is looked at."""

GRACE_SECONDS = 0.2
"""How long a step may go on after KILL appeared before it is abandoned."""

LINGER_SECONDS = 5.0
"""How long the watchdog keeps polling after the last step, before it sleeps until the next."""


class _Kill(Protocol):
    def reason(self) -> str | None: ...


class TickInterrupted(BaseException):
    """SIGTERM or SIGINT reached a tick: not the step's error, the tick's own stop.

    A BaseException, so a step's ``except Exception`` does not swallow it.
    """

    def __init__(self, signum: int) -> None:
        self.signum = signum
        super().__init__(f"interrupted by {signal.Signals(signum).name}")


class _Watch:
    """One running step's switch (a plain class: a dataclass costs a cron tick ~0.3 ms to define)."""

    __slots__ = ("kill", "on_kill", "seen_at")

    def __init__(self, kill: _Kill, on_kill: Callable[[str], None]) -> None:
        self.kill, self.on_kill = kill, on_kill
        self.seen_at: float | None = None


class _Watchdog:
    """One daemon thread for every running step of the process."""

    def __init__(self) -> None:
        self._cond = threading.Condition()
        self._entries: dict[int, _Watch] = {}
        self._next = 0
        self._thread: threading.Thread | None = None
        self._idle = False  # the thread waits on the condition: a new entry must wake it

    def watch(self, kill: _Kill, on_kill: Callable[[str], None]) -> int:
        with self._cond:
            self._next += 1
            self._entries[self._next] = _Watch(kill, on_kill)
            if self._thread is None or not self._thread.is_alive():
                self._thread = threading.Thread(target=self._loop, name="heartbeat-watchdog", daemon=True)
                self._thread.start()
            elif self._idle:
                self._cond.notify()
            return self._next

    def unwatch(self, token: int) -> None:
        with self._cond:
            self._entries.pop(token, None)

    def _loop(self) -> None:
        last_busy = time.monotonic()
        while True:
            with self._cond:
                if self._entries:
                    last_busy = time.monotonic()
                elif time.monotonic() - last_busy > LINGER_SECONDS:
                    self._idle = True
                    while not self._entries:
                        self._cond.wait()
                    self._idle = False
            time.sleep(POLL_SECONDS)
            with self._cond:
                entries = list(self._entries.items())
            now = time.monotonic()
            for token, entry in entries:
                reason = entry.kill.reason()
                if reason is None:
                    entry.seen_at = None
                    continue
                if entry.seen_at is None:
                    entry.seen_at = now
                if now - entry.seen_at + 1e-9 < GRACE_SECONDS:
                    continue
                with self._cond:
                    if self._entries.pop(token, None) is None:
                        continue  # the step returned meanwhile
                # One tick's failing hook must not stop the watch over the others.
                with contextlib.suppress(Exception):
                    entry.on_kill(reason)


_WATCHDOG = _Watchdog()


def watch(kill: _Kill, on_kill: Callable[[str], None]) -> int:
    """Watch ``kill`` while a step runs; ``on_kill(reason)`` is called once if the step must go."""
    return _WATCHDOG.watch(kill, on_kill)


def unwatch(token: int) -> None:
    """The step returned: stop watching it (an ``on_kill`` already under way still finishes)."""
    _WATCHDOG.unwatch(token)


@contextmanager
def signals_interrupt() -> Iterator[None]:
    """Within the block (main thread only), SIGTERM and SIGINT raise :class:`TickInterrupted`."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def interrupt(signum: int, frame: FrameType | None) -> None:
        raise TickInterrupted(signum)

    previous = {sig: signal.signal(sig, interrupt) for sig in (signal.SIGTERM, signal.SIGINT)}
    try:
        yield
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
