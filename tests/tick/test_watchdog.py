"""The step watchdog: a KILL that appears while a step runs is acted on, whatever the clock does."""

from __future__ import annotations

import signal
import subprocess
import sys
import threading
import time

import pytest

from heartbeat.tick import watchdog


class _Killed:
    """A step's switch that says KILL from the start."""

    def reason(self) -> str | None:
        return "KILL"


def test_a_clock_that_refuses_to_sleep_does_not_end_the_watch(monkeypatch: pytest.MonkeyPatch) -> None:
    """libfaketime without a faked monotonic clock makes ``time.sleep`` raise EINVAL: the watchdog's
    thread died of it with a traceback, and a KILL during the step went unseen (live round 46's
    harness). It waits by looking at the clock instead, and the KILL is acted on."""

    def refuse(seconds: float) -> None:
        raise OSError(22, "Invalid argument")

    monkeypatch.setattr(time, "sleep", refuse)
    killed = threading.Event()
    token = watchdog.watch(_Killed(), lambda reason: killed.set())
    try:
        assert killed.wait(5), "the KILL was not acted on"
    finally:
        watchdog.unwatch(token)


class _Broken:
    """A switch whose reading raises (a plugin's stop, a share gone away mid-read)."""

    def reason(self) -> str | None:
        raise RuntimeError("share unmounted")


def test_a_switch_that_cannot_be_read_stops_the_step_and_the_watch_goes_on() -> None:
    """A ``reason()`` that raised ended the watchdog's thread: the step, and every other step
    watched with it, ran on unwatched. It fails closed instead, and the other switches are still
    looked at."""
    reasons: list[str] = []
    broken = threading.Event()
    token = watchdog.watch(_Broken(), lambda reason: (reasons.append(reason), broken.set()))
    killed = threading.Event()
    other = watchdog.watch(_Killed(), lambda reason: killed.set())
    try:
        assert broken.wait(5), "the unreadable switch did not stop its step"
        assert killed.wait(5), "the watch over the other step ended"
    finally:
        watchdog.unwatch(token)
        watchdog.unwatch(other)
    assert reasons == ["the stop switch cannot be read (RuntimeError); failing closed"]


# A block that never unwinds (its clean-up swallows the signal) and an on_stuck that hangs as a
# lock held by the interrupted thread, or a stream nobody reads, would make it.
_NEVER_ENDS = """
import threading
from heartbeat.tick.watchdog import TickInterrupted, signals_interrupt
with signals_interrupt(lambda signum: threading.Event().wait()):
    while True:
        try:  # "ready" said inside it: the signal, sent once it is read, is always swallowed here
            print("ready", flush=True)
            threading.Event().wait()
        except TickInterrupted:
            pass
"""


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM])
def test_a_signal_ends_the_process_even_when_on_stuck_hangs(signum: int) -> None:
    """An ``on_stuck`` that hung kept a `heartbeat tick` alive after SIGINT: an operator's signal
    must always end the process, with the signal's exit code."""
    proc = subprocess.Popen([sys.executable, "-c", _NEVER_ENDS], stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None and proc.stdout.readline() == "ready\n"
        proc.send_signal(signum)
        # Generous: only a hang fails here; the bound itself is STUCK_HANDLER_SECONDS.
        assert proc.wait(timeout=30) == 128 + signum
    finally:
        proc.kill()
        proc.wait()
