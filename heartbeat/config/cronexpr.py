"""Whether a crontab expression is one the scheduler accepts, without importing the scheduler.

``heartbeat tick`` never imports APScheduler (a cron tick must start fast),
yet a bad ``schedule.cron`` must be refused by every command alike. This is
the grammar of APScheduler 3's ``CronTrigger.from_crontab``, checked with
``re``; the tests hold it to APScheduler's own answers. An expression the
grammar takes but no date matches (``0 0 31 2 *``: February the 31st) is
refused too: its run would wait for ever and its dead man's switch never be due.
"""

from __future__ import annotations

import re
from datetime import date, timedelta

__all__ = ["cron_problem"]

_FIELDS = (("minute", 0, 59), ("hour", 0, 23), ("day", 1, 31), ("month", 1, 12), ("day_of_week", 0, 6))
_ORDER = ("month", "day", "day_of_week", "hour", "minute")
_WEEKDAYS = ("mon", "tue", "wed", "thu", "fri", "sat", "sun")
_MONTHS = ("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec")
_ALL = re.compile(r"\*(?:/(?P<step>\d+))?$")
_RANGE = re.compile(r"(?P<first>\d+)(?:-(?P<last>\d+))?(?:/(?P<step>\d+))?$")
_NAMES = re.compile(r"(?P<first>[a-z]+)(?:-(?P<last>[a-z]+))?", re.IGNORECASE)  # a prefix match, as theirs
_LAST = re.compile(r"last", re.IGNORECASE)
_PARTS = re.compile(" *, *")  # a field's comma-separated parts


def cron_problem(expr: str) -> str | None:
    """What is wrong with the five-field crontab ``expr``, or None when the scheduler takes it."""
    values = expr.split()
    if len(values) != 5:
        return f"Wrong number of fields; got {len(values)}, expected 5"
    fields = dict(zip(_FIELDS, values, strict=True))
    for field in sorted(fields, key=lambda f: _ORDER.index(f[0])):  # checked in the scheduler's order
        for part in _PARTS.split(fields[field].strip()):
            problem = _part_problem(part, *field)
            if problem:
                return problem
    if not _fires(values[2], values[3], values[4]):
        return f"{expr.strip()!r} never fires: no date has that day of the month in that month and weekday"
    return None


_CYCLE_START, _CYCLE_DAYS = date(2001, 1, 1), 28 * 365 + 7  # 28 years: every date's weekday, leap days too


def _fires(day: str, month: str, weekday: str) -> bool:
    """Whether a date matches the day, month and weekday fields (all of them, as APScheduler asks)."""
    days, months, weekdays = (
        _allowed(day, *_FIELDS[2]),
        _allowed(month, *_FIELDS[3]),
        _allowed(weekday, *_FIELDS[4]),
    )
    if days is None and months is None and weekdays is None:
        return True
    last = "last" in day.lower()
    for n in range(_CYCLE_DAYS):
        when = _CYCLE_START + timedelta(days=n)
        if (
            (months is None or when.month in months)
            and (weekdays is None or when.weekday() in weekdays)
            and (days is None or when.day in days or (last and (when + timedelta(days=1)).day == 1))
        ):
            return True
    return False


def _allowed(value: str, name: str, low: int, high: int) -> set[int] | None:
    """The values one field (already checked) allows; None for every value (``*``)."""
    allowed: set[int] = set()
    for part in _PARTS.split(value.strip()):
        read = _read(part, name)
        if isinstance(read, tuple):
            first, last, step = read
            if first is None and not step:
                return None
            allowed.update(
                range(low if first is None else first, (high if last is None else last) + 1, step or 1)
            )
    return allowed


def _part_problem(part: str, name: str, low: int, high: int) -> str | None:
    """What is wrong with one comma-separated part of one field, else None."""
    read = _read(part, name)
    return read if read is None or isinstance(read, str) else _range_problem(part, *read, low, high)


def _read(part: str, name: str) -> tuple[int | None, int | None, int | None] | str | None:
    """One comma-separated part of one field as its first value, its last and its step (first None:
    ``*``; last None: the field's top), or what is wrong with its words; None for the day's ``last``."""
    found = _ALL.match(part)
    if found:
        return None, None, int(found["step"]) if found["step"] else None
    found = _RANGE.match(part)
    if found:
        first = int(found["first"])
        last = int(found["last"]) if found["last"] else None
        step = int(found["step"]) if found["step"] else None
        return first, last if last is not None or step else first, step
    names = {"month": _MONTHS, "day_of_week": _WEEKDAYS}.get(name)
    found = _NAMES.match(part) if names else None
    if found and names:
        for word in filter(None, (found["first"], found["last"])):
            if word.lower() not in names:
                return f'Invalid {"month" if name == "month" else "weekday"} name "{word}"'
        offset = 1 if name == "month" else 0  # month names count from 1, weekday names from 0
        first = names.index(found["first"].lower()) + offset
        last = names.index(found["last"].lower()) + offset if found["last"] else first
        return first, last, None
    if name == "day" and _LAST.match(part):
        return None
    return f'Unrecognized expression "{part}" for field "{name}"'


def _range_problem(
    part: str, first: int | None, last: int | None, step: int | None, low: int, high: int
) -> str | None:
    """The scheduler's checks of ``first-last/step`` (``first`` None: ``*``)."""
    if step == 0:
        return "Increment must be higher than 0"
    if first is not None and last is not None and first > last:
        return "The minimum value in a range must not be higher than the maximum"
    problem = None
    span = (last or high) - first if first is not None else high - low
    if step and step > high - low:
        problem = f"the step value ({step}) is higher than the total range of the expression ({high - low})"
    elif first is not None and first < low:
        problem = f"the first value ({first}) is lower than the minimum value ({low})"
    elif last is not None and last > high:
        problem = f"the last value ({last}) is higher than the maximum value ({high})"
    elif step and step > span:
        problem = f"the step value ({step}) is higher than the total range of the expression ({span})"
    return f"Error validating expression {part!r}: {problem}" if problem else None
