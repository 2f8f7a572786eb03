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
:meth:`heartbeat.tick.sharedstop.SharedStop.polled`: that ``reason()`` never
blocks and reads the switch (which may be a URL) at most once a second, so
the watchdog's pace is the KILL file's and the stop server sees no more.

:func:`signals_interrupt` turns SIGTERM and SIGINT into
:class:`TickInterrupted` for the length of a ``heartbeat tick``, so a signal
ends the tick through ``finally`` blocks (an ``--exec`` step's process group
is ended) instead of killing the process where it stands. A step whose own
clean-up does not let the exception through (a thread pool's ``with`` block
joins its workers) would keep the tick, and the agent's threads, running:
``on_stuck`` is then called from a daemon thread :data:`INTERRUPT_GRACE_SECONDS`
after the signal, to end the process.

A thread the step left running (a pool abandoned on KILL or a signal, or work
left behind when it returned) would also keep the process alive once the tick
is over: the interpreter joins it before exiting, and meanwhile the agent acts
with nothing watching it. :func:`threads_blocking_exit` counts them and
:func:`exit_now` ends the process without waiting (``tick`` and ``run`` do).
"""

from __future__ import annotations

import _thread
import contextlib
import os
import signal
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from types import FrameType
from typing import Protocol

__all__ = [
    "GRACE_SECONDS",
    "INTERRUPT_GRACE_SECONDS",
    "LINGER_SECONDS",
    "POLL_SECONDS",
    "TickInterrupted",
    "done_within",
    "end_after",
    "end_left_running",
    "end_started_if_stopped",
    "exit_now",
    "flushed_within",
    "is_stop",
    "signals_interrupt",
    "threads_blocking_exit",
    "unwatch",
    "watch",
    "watching",
]

POLL_SECONDS = 0.05
"""How often the KILL file of a running step is looked at (a stat: 20 a second costs nothing)."""

GRACE_SECONDS = 0.15
"""How long a step may go on after KILL appeared before it is abandoned: time for a step that
checks ``ctx.killed`` between its calls to return. With the poll, the journal's fsync and the
process's exit, under load, it must fit the half-second promise (0.2 s took 0.52 s once)."""

INTERRUPT_GRACE_SECONDS = 0.5
"""How long a tick may take to unwind after SIGTERM/SIGINT before ``on_stuck`` ends it."""

STUCK_HANDLER_SECONDS = 2.0
"""How long ``on_stuck`` may take to end the process before it is ended without it (its journal
line and its note on stderr are bounded well within this; a lock or a stream that hangs is not)."""

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
            _pause()
            with self._cond:
                entries = list(self._entries.items())
            now = time.monotonic()
            for token, entry in entries:
                reason = _read(entry.kill)
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


def _read(kill: _Kill) -> str | None:
    """``kill``'s reason; a switch that cannot be read stops the step (fail closed): a raising
    ``reason()`` would end the watch, and the step and every other one would run unwatched."""
    try:
        return kill.reason()
    except Exception as exc:  # a failing switch of any kind: its own error says nothing safe to show
        return f"the stop switch cannot be read ({type(exc).__name__}); failing closed"


def _pause() -> None:
    """Wait :data:`POLL_SECONDS`. A clock that refuses to sleep must not end the watch and leave
    the step unwatched (libfaketime without a faked monotonic clock makes ``time.sleep`` raise
    EINVAL): the wait goes on by looking at the clock, yielding the processor between looks."""
    try:
        time.sleep(POLL_SECONDS)
    except OSError:
        until = time.monotonic() + POLL_SECONDS
        while time.monotonic() < until:
            os.sched_yield()


_WATCHDOG = _Watchdog()


def watch(kill: _Kill, on_kill: Callable[[str], None]) -> int:
    """Watch ``kill`` while a step runs; ``on_kill(reason)`` is called once if the step must go."""
    return _WATCHDOG.watch(kill, on_kill)


def unwatch(token: int) -> None:
    """The step returned: stop watching it (an ``on_kill`` already under way still finishes)."""
    _WATCHDOG.unwatch(token)


@contextmanager
def watching(kill: _Kill, on_kill: Callable[[str], None]) -> Iterator[None]:
    """:func:`watch` ``kill`` for the length of the ``with`` block."""
    token = watch(kill, on_kill)
    try:
        yield
    finally:
        unwatch(token)


@contextmanager
def signals_interrupt(
    on_stuck: Callable[[int], None] | None = None, *, grace: float = INTERRUPT_GRACE_SECONDS
) -> Iterator[None]:
    """Within the block (main thread only), SIGTERM and SIGINT raise :class:`TickInterrupted`.

    ``on_stuck(signum)`` is called from a daemon thread when the block has not
    been left ``grace`` seconds after the first signal (it is expected to end
    the process); leaving the block in time cancels it. Should ``on_stuck`` itself
    hang, the process ends :data:`STUCK_HANDLER_SECONDS` later with the signal's code.
    """
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    left: list[bool] = []  # a plain flag: the handler and the timer take no lock (see interrupt)

    def deadline(signum: int) -> None:
        time.sleep(grace)
        if not left and on_stuck is not None:
            # An operator's signal always ends the process: on_stuck journals and writes on its way
            # out, and a lock the interrupted thread holds, or a stream nobody reads, would keep it.
            _thread.start_new_thread(end_after, (STUCK_HANDLER_SECONDS, 128 + signum))
            on_stuck(signum)

    def interrupt(signum: int, frame: FrameType | None) -> None:
        if on_stuck is not None and not interrupted:
            interrupted.append(signum)
            # A raw thread: threading.Thread.start() takes locks the interrupted main thread
            # may hold (it may be starting a thread itself), and would deadlock here.
            _thread.start_new_thread(deadline, (signum,))
        raise TickInterrupted(signum)

    interrupted: list[int] = []
    previous = {sig: signal.signal(sig, interrupt) for sig in (signal.SIGTERM, signal.SIGINT)}
    try:
        yield
    finally:
        left.append(True)
        for sig, handler in previous.items():
            signal.signal(sig, handler)


def end_after(seconds: float, code: int) -> None:
    """End the process with ``code`` after ``seconds``, whatever the other threads do (nothing flushed:
    a stream another thread holds must not keep it alive). Run it on a raw ``_thread``."""
    time.sleep(seconds)
    os._exit(code)


def threads_blocking_exit() -> int:
    """How many threads Python would wait for before this process could exit.

    Non-daemon threads, and the workers of a thread pool (``concurrent.futures``, asyncio's
    default executor), which the interpreter joins at exit whether they are daemons or not; but
    not a pool's idle worker (waiting for work in the pool's own loop), which that exit hook
    wakes and ends at once: the Agents SDK leaves asyncio's so after every run.
    """
    main = threading.main_thread()
    threads = {t for t in threading.enumerate() if t is not main and not t.daemon and t.is_alive()}
    pools = sys.modules.get("concurrent.futures.thread")
    workers = getattr(pools, "_threads_queues", None)  # what its exit hook joins
    if workers is not None:
        threads.update(t for t in list(workers) if t.is_alive())
        idle = getattr(getattr(pools, "_worker", None), "__code__", None)
        if idle is not None:
            frames = sys._current_frames()  # each thread's innermost Python frame
            threads -= {t for t in list(workers) if (f := frames.get(t.ident or -1)) and f.f_code is idle}
    return len(threads)


def done_within(call: Callable[[], object], seconds: float) -> bool:
    """Run ``call`` (errors ignored) unless it takes over ``seconds``; True when it finished.

    For output on the way out: a pipe nobody reads blocks a write or a flush for good (and a
    thread blocked writing to it holds the stream's lock), so the call runs on a daemon
    thread that is left behind if it hangs.
    """
    done: list[bool] = []

    def run() -> None:
        with contextlib.suppress(Exception):
            call()
        done.append(True)

    thread = threading.Thread(target=run, name="heartbeat-output", daemon=True)
    thread.start()
    thread.join(seconds)
    return bool(done)


def flushed_within(stream: object, seconds: float) -> bool:
    """Flush ``stream`` (a file object, or None) unless that takes over ``seconds``; True when it flushed."""
    flush = getattr(stream, "flush", None)
    return True if flush is None else done_within(flush, seconds)


def is_stop(code: int) -> bool:
    """Whether exit ``code`` says the heartbeat was stopped: 3 (KILL) or over 128 (a signal)."""
    return code == 3 or code > 128


def end_started_if_stopped(code: int) -> None:
    """Exit ``code`` is a stop (:func:`is_stop`): end every process this one started.

    A step's own subprocess must not go on acting once its heartbeat stopped (:mod:`heartbeat.tick.orphans`).
    """
    if is_stop(code):
        from .orphans import end_descendants

        end_descendants()


def exit_now(code: int, note: str | None, *, within: float = 0.2) -> None:
    """Say ``note`` (if any) on stderr, flush what was printed (``within`` s each), end with ``code`` now.

    On a stop (:func:`end_started_if_stopped`) the processes this one started end first.
    """
    end_started_if_stopped(code)
    with contextlib.suppress(Exception):
        if note is not None:
            print(note, file=sys.stderr)
    for stream in (sys.stdout, sys.stderr):
        flushed_within(stream, within)
    os._exit(code)


def end_left_running(code: int, *, own_process: bool, step_left: bool = False) -> int:
    """``tick``/``run`` in their own process: what a step left running ends with the process, now.

    Python would first wait for the step's threads (a pool it abandoned on KILL or a signal,
    or work it left running when it returned), and meanwhile the agent would go on with no
    heartbeat watching it and no KILL able to stop it. ``step_left``: a step was abandoned.
    Returns ``code`` when nothing is left (or in a library caller's process).
    """
    if not own_process:
        return code
    left = threads_blocking_exit()
    if left or step_left:
        what = f"{left} thread(s) the step left running" if left else "the abandoned step"
        exit_now(code, f"heartbeat: ending {what} with the process")  # which ends the processes too
    end_started_if_stopped(code)
    return code
