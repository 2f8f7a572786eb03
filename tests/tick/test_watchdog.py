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
