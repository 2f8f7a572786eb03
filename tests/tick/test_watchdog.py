"""The step watchdog: a KILL that appears while a step runs is acted on, whatever the clock does."""

from __future__ import annotations

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
