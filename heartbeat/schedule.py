"""``heartbeat run``: ticks on APScheduler 3, stops on KILL, SIGINT or SIGTERM.

One job per agent (``max_instances=1``, ``coalesce``, a misfire grace time),
each ticking once at start and then on its interval or cron schedule, plus a
watcher that looks at every KILL file about once a second and retries
undelivered notifications. apscheduler is imported here only, so a cron
``heartbeat tick`` never pays for it.
"""

from __future__ import annotations

import logging
import signal
import sys
import threading
import traceback
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import timedelta
from types import FrameType

from apscheduler.events import EVENT_JOB_MISSED, JobExecutionEvent
from apscheduler.executors.pool import ThreadPoolExecutor
from apscheduler.schedulers.blocking import BlockingScheduler
from apscheduler.triggers.base import BaseTrigger
from apscheduler.triggers.cron import CronTrigger
from apscheduler.triggers.interval import IntervalTrigger

from .errors import HeartbeatError, UsageError
from .runner import Heartbeat, TickResult, utc_now

__all__ = ["RunSummary", "Runner", "make_trigger"]

KILL_POLL_SECONDS = 1.0


def make_trigger(*, every: timedelta | None, cron: str | None, timezone: str = "UTC") -> BaseTrigger:
    """An APScheduler trigger for ``every`` or ``cron`` (exactly one)."""
    if (every is None) == (cron is None):
        raise UsageError("give a schedule: --every DURATION or --cron EXPR (or [schedule] in the config)")
    if every is not None:
        return IntervalTrigger(seconds=every.total_seconds(), timezone=timezone)
    assert cron is not None
    try:
        return CronTrigger.from_crontab(cron, timezone=timezone)
    except ValueError as exc:
        raise UsageError(f"cron {cron!r}: {exc}") from None


@dataclass
class RunSummary:
    """How a run ended."""

    exit_code: int = 0
    reason: str = ""
    ticks: dict[str, int] = field(default_factory=dict)
    missed: int = 0


class Runner:
    """Drives one or more heartbeats on a schedule until KILL, a signal or ``--ticks``."""

    def __init__(
        self,
        heartbeats: Sequence[Heartbeat],
        trigger: BaseTrigger,
        *,
        ticks: int | None = None,
        misfire_grace_time: timedelta = timedelta(minutes=5),
        on_tick: Callable[[TickResult], None] = lambda result: None,
        on_note: Callable[[str], None] = lambda text: print(text, file=sys.stderr),
    ) -> None:
        self.heartbeats = {hb.name: hb for hb in heartbeats}
        self.trigger = trigger
        self.max_ticks = ticks
        self.on_tick = on_tick
        self.on_note = on_note
        self.summary = RunSummary(ticks={name: 0 for name in self.heartbeats})
        self._last: dict[str, TickResult] = {}
        self._lock = threading.RLock()  # stop() may run in a signal handler on the main thread
        self._idle = threading.Condition(self._lock)
        self._busy = 0
        self._stopping = False
        self.scheduler = BlockingScheduler(
            timezone="UTC",
            executors={
                "default": ThreadPoolExecutor(max_workers=min(32, len(heartbeats) + 1)),
                "watch": ThreadPoolExecutor(max_workers=1),
            },
            job_defaults={
                "coalesce": True,
                "max_instances": 1,
                "misfire_grace_time": int(misfire_grace_time.total_seconds()) or 1,
            },
        )
        # Misses are counted and reported in the summary; APScheduler's own log line is noise.
        logging.getLogger("apscheduler").setLevel(logging.ERROR)

    def run(self) -> RunSummary:
        """Block until stopped; returns how the run ended."""
        now = utc_now()
        for name in self.heartbeats:
            self.scheduler.add_job(
                self._tick, self.trigger, args=[name], id=f"tick:{name}", name=name, next_run_time=now
            )
        self.scheduler.add_job(
            self._watch,
            IntervalTrigger(seconds=KILL_POLL_SECONDS),
            id="watch",
            executor="watch",
            next_run_time=now,
        )
        self.scheduler.add_listener(self._missed, EVENT_JOB_MISSED)
        previous = {sig: signal.signal(sig, self._on_signal) for sig in (signal.SIGINT, signal.SIGTERM)}
        try:
            self.scheduler.start()
        finally:
            for sig, handler in previous.items():
                signal.signal(sig, handler)
        with self._idle:  # let a tick that is still running finish its save and journal
            while self._busy:
                self._idle.wait()
        # The run itself succeeded (exit 0); who still waits for a human is said, not an error.
        waiting = [n for n, r in self._last.items() if r.outcome == "needs_human"]
        if waiting:
            self.summary.reason += f"; waiting for a human: {', '.join(waiting)}"
        return self.summary

    def _tick(self, name: str) -> None:
        with self._lock:
            if self._stopping:
                return
            self._busy += 1
        try:
            result = self.heartbeats[name].tick()
        except Exception as exc:  # a bug must not kill the other agents' schedule; say it loudly
            self.on_note(f"{name}: internal error in tick:\n{traceback.format_exc()}")
            result = TickResult(name, "ran", 1, f"internal error: {type(exc).__name__}: {exc}")
        finally:
            with self._idle:
                self._busy -= 1
                self._idle.notify_all()
        self._last[name] = result
        self.summary.ticks[name] += 1
        self.on_tick(result)
        if result.outcome == "killed":
            self.stop(3, result.message)
        elif result.outcome == "error":
            self._drop(name, result.exit_code, result.message)
        elif self.max_ticks is not None and self.summary.ticks[name] >= self.max_ticks:
            self._drop(name, None, f"{self.max_ticks} tick(s) done")

    def _drop(self, name: str, code: int | None, why: str) -> None:
        """Stop ticking one agent; the run ends when none is left."""
        try:
            self.scheduler.remove_job(f"tick:{name}")
        except LookupError:
            return
        with self._lock:
            left = [job for job in self.scheduler.get_jobs() if job.id.startswith("tick:")]
        if code is not None:
            self.summary.exit_code = max(self.summary.exit_code, code)
        if not left:
            self.stop(self.summary.exit_code, why)

    def _watch(self) -> None:
        """Once a second: KILL files, then undelivered notifications (when due)."""
        for hb in self.heartbeats.values():
            reason = hb.kill.reason()
            if reason is not None:
                self.stop(3, f"stopped by {hb.kill.path}: {reason}")
                return
        for hb in self.heartbeats.values():
            if not hb.outbox_waiting():
                continue
            # The outbox's own lock, not the state folder's: a webhook that takes its whole
            # deadline must not keep `pause`/`resume` (exit 5) or a tick waiting.
            try:
                report = hb.retry_outbox(utc_now(), force=False)
            except (HeartbeatError, OSError) as exc:
                self.on_note(f"{hb.name}: outbox not retried: {hb.redact(str(exc))}")
                continue
            for key in report.delivered:
                self.on_note(f"{hb.name}: delivered {key}")

    def _missed(self, event: JobExecutionEvent) -> None:
        self.summary.missed += 1

    def _on_signal(self, signum: int, frame: FrameType | None) -> None:
        self.stop(0, f"stopped by {signal.Signals(signum).name}")

    def stop(self, code: int, reason: str) -> None:
        """Start no new tick; the current one finishes. Safe from jobs and signal handlers."""
        with self._lock:
            if self._stopping:
                return
            self._stopping = True
        self.summary.exit_code = code if code in (2, 3) else max(self.summary.exit_code, code)
        self.summary.reason = reason
        if self.scheduler.running:
            self.scheduler.shutdown(wait=False)
