"""The pure parts of status and log: when a heartbeat is overdue, styles, event filters."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from heartbeat.base.errors import UsageError
from heartbeat.cli.logview import EventFilter, render_event
from heartbeat.cli.status import due_by
from heartbeat.cli.style import Style
from heartbeat.config.file import ScheduleConfig
from heartbeat.config.types import parse_since

SEEN = datetime(2026, 5, 1, 3, 7, tzinfo=UTC)


def test_due_by_every_is_periods_after_the_last_heartbeat() -> None:
    """Every 30m, two periods: due an hour after the last heartbeat seen."""
    schedule = ScheduleConfig(every="30m")
    assert due_by(schedule, SEEN) == SEEN + timedelta(hours=1)
    assert due_by(schedule, SEEN, periods=3) == SEEN + timedelta(minutes=90)


def test_due_by_cron_is_the_nth_fire_time() -> None:
    """*/30 cron after 03:07: fires at 03:30 and 04:00, so due by 04:00."""
    schedule = ScheduleConfig(cron="*/30 * * * *")
    assert due_by(schedule, SEEN) == datetime(2026, 5, 1, 4, 0, tzinfo=UTC)


def test_a_deadline_past_year_9999_is_the_calendars_end_not_a_crash() -> None:
    """A last tick stamped at the calendar's end (a clock gone wrong, a hand edit): never overdue."""
    end = datetime.max.replace(tzinfo=UTC)
    last = datetime(9999, 12, 31, 23, 59, 59, tzinfo=UTC)
    assert due_by(ScheduleConfig(every="30m"), last) == end
    assert due_by(ScheduleConfig(cron="*/5 * * * *"), last) == end
    assert due_by(ScheduleConfig(), last, max_age=timedelta(hours=1)) == end


def test_due_by_max_age_wins_and_no_schedule_is_unknown() -> None:
    """--max-age overrides the schedule; with neither, overdue cannot be told."""
    assert due_by(ScheduleConfig(every="30m"), SEEN, max_age=timedelta(hours=5)) == SEEN + timedelta(hours=5)
    assert due_by(ScheduleConfig(), SEEN) is None


def test_style_plain_and_fancy() -> None:
    """Plain: ASCII sparkline, no escape codes; fancy: Unicode and ANSI colour."""
    plain, fancy = Style(), Style(colour=True, unicode=True)
    assert plain.sparkline([0, 1, 2, 3]).isascii() and plain.paint("x", "red") == "x"
    assert fancy.sparkline([0, 3]) == "▁█" and fancy.paint("x", "red") == "\033[31mx\033[0m"
    assert plain.sparkline([]) == "" and plain.sparkline([5, 5]) == "__"


def test_parse_since_takes_durations_and_times() -> None:
    """`--since 2h` is two hours ago; a naive time is UTC; junk is a usage error."""
    now = datetime(2026, 5, 1, 12, tzinfo=UTC)
    assert parse_since("2h", now) == datetime(2026, 5, 1, 10, tzinfo=UTC)
    assert parse_since("2026-05-01T03:00", now) == datetime(2026, 5, 1, 3, tzinfo=UTC)
    assert parse_since(" 2026-05-01T05:00+02:00 ", now) == datetime(2026, 5, 1, 3, tzinfo=UTC)
    with pytest.raises(UsageError, match=r"--since 'last tuesday': give a duration such as 10m"):
        parse_since("last tuesday", now)


def test_log_and_report_share_one_since_parser() -> None:
    """`log --since` and `report --since` read the same forms and say the same on a bad one."""
    from heartbeat.report import write as report

    assert report.parse_since is parse_since


def test_event_filter_by_kind_and_time() -> None:
    """Kinds and a start time; an event without a time never passes a --since."""
    keep = EventFilter(frozenset({"anomaly"}), datetime(2026, 5, 1, 3, tzinfo=UTC))
    assert keep({"event": "anomaly", "at": "2026-05-01T03:00:01+00:00"})
    assert keep({"event": "anomaly", "at": "2026-05-01T03:00:01Z"})
    assert not keep({"event": "tick", "at": "2026-05-01T03:00:01+00:00"})
    assert not keep({"event": "anomaly", "at": "2026-05-01T02:59:59+00:00"})
    assert not keep({"event": "anomaly"})


def test_render_event_shows_failures() -> None:
    """An action's error is on its line; an agent column when asked."""
    line = render_event(
        {
            "at": "2026-05-01T03:00:00+00:00",
            "agent": "alpha",
            "tick": 4,
            "event": "action",
            "summary": "fetch()",
            "error": "ConnectError: refused",
        },
        Style(),
        agent_width=6,
    )
    assert (
        line == "2026-05-01 03:00:00  alpha   tick    4  action      fetch() -> error: ConnectError: refused"
    )


def test_an_event_outside_any_tick_shows_no_tick_number() -> None:
    """A KILL found before a tick is journaled with tick 0, no tick's: `log` shows "-" (it showed
    "tick 0 kill" for an agent at tick 8, live round 43)."""
    event = {"at": "2026-05-01T03:00:00+00:00", "tick": 0, "event": "kill", "reason": "runaway", "by": "KILL"}
    assert "tick    -  kill" in render_event(event, Style())
