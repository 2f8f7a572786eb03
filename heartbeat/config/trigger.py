"""A schedule as an APScheduler trigger: ``every`` or ``cron`` (``[schedule]``, ``--every``, ``--cron``).

``heartbeat run`` waits on it, ``status`` and ``report`` ask it when the next
heartbeat is due. apscheduler is imported only here and by the scheduler,
so a cron ``heartbeat tick`` never pays for it.
"""

from __future__ import annotations

from datetime import timedelta

from apscheduler.triggers.base import BaseTrigger
from apscheduler.triggers.cron import CronTrigger
from apscheduler.triggers.interval import IntervalTrigger

from ..base.errors import UsageError

__all__ = ["make_trigger"]


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
