"""``heartbeat report``: an agent's night as one self-contained HTML page, and a fleet overview.

The thin I/O shell around :mod:`heartbeat.report.data` (journal events ->
timeline, pure) and :mod:`heartbeat.report.page` (data -> HTML, pure): it
reads ``state.json`` and the journal, redacts with the config's secrets like
every other output, and writes the page atomically (0600). A page written
into a state folder is written under that folder's lock, like every other
file there.

The runner calls :func:`write_report` when an agent escalates, so
``report.html`` lies next to ``ESCALATION.md``.
"""

from __future__ import annotations

import itertools
import os
import sys
from collections.abc import Iterable, Mapping, Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from ..base.errors import HeartbeatError, StateLocked, StateWriteError, UsageError
from ..base.fsutil import PRIVATE_FILE_MODE, atomic_write, not_regular
from ..config.file import HeartbeatConfig
from ..config.flags import addressed
from ..config.types import parse_since
from ..core.models import AgentState, Status
from ..core.policy import anew_limit
from ..state.journal import Journal
from ..state.store import REPORT_FILE, StateStore
from .data import Slot, collect, parse_at
from .page import AgentPage, OverviewRow, render_agent, render_overview
from .tuning import render_tuning

if TYPE_CHECKING:
    from ..state.killswitch import KillSwitch

__all__ = [
    "REPORT_FILE",
    "Reported",
    "agent_page",
    "make_reports",
    "parse_stretch",
    "render_agent_page",
    "render_tuning",
    "report_path",
    "write_overview",
    "write_report",
    "write_tuning",
]

LOCK_WAIT = 5.0
"""Seconds ``heartbeat report`` waits for a busy state folder before giving up (exit 5)."""


class Reported(Protocol):
    """What a page is made from: one agent's config, state folder and KILL file (a Heartbeat is one)."""

    name: str
    config: HeartbeatConfig
    store: StateStore
    kill: KillSwitch
    state_dir: Path

    def redact(self, text: str) -> str: ...

    def read_state(self) -> AgentState: ...


def report_path(hb: Reported) -> Path:
    """Where an agent's page lives: ``<state dir>/report.html`` (the store names it)."""
    return hb.store.report_path


def parse_stretch(text: str) -> tuple[int, int]:
    """``--stretch``: ``FROM:TO`` ticks (either side may be left out), or one tick ``N``."""
    first, sep, last = text.strip().partition(":")
    try:
        low = int(first) if first.strip() else 1
        high = int(last) if last.strip() else (sys.maxsize if sep else low)
    except ValueError:
        raise UsageError(f"--stretch {text!r}: give FROM:TO tick numbers, e.g. 40:52, or one tick") from None
    if low < 0 or high < low:
        raise UsageError(f"--stretch {text!r}: FROM must be 0 or more and at most TO")
    return low, high


def _cli(hb: Reported, command: str) -> str:
    """A command line for this agent that works from any folder (the page sits in its state folder)."""
    return addressed(command, hb.config, hb.name, hb.state_dir)


def _read(hb: Reported) -> tuple[AgentState | None, str | None]:
    """The state, or why it cannot be read (the page is still made from the journal)."""
    if not hb.store.state_path.exists():
        return AgentState(), None
    try:
        return hb.read_state(), None
    except HeartbeatError as exc:
        return None, hb.redact(str(exc))


def agent_page(
    hb: Reported,
    *,
    now: datetime,
    since: datetime | None = None,
    stretch: tuple[int, int] | None = None,
    pending: Sequence[Mapping[str, Any]] = (),
    overview_href: str | None = None,
) -> AgentPage:
    """Gather one agent's page: its state, its journal (plus ``pending`` events not yet journaled)."""
    journal = Journal(hb.store.journal_path)
    events: Iterable[Mapping[str, Any]] = itertools.chain(journal.read(), pending)
    timeline = collect(events, since=since, stretch=stretch, redact=hb.redact)
    state, error = _read(hb)
    kill = hb.kill.reason()
    red = hb.redact
    page = AgentPage(
        agent=hb.name,
        generated_at=now.isoformat(),
        state_dir=str(hb.state_dir),
        timeline=timeline,
        status=state.status.value if state else None,
        state_error=error,
        kill=red(kill) if kill is not None else None,
        kill_path=str(hb.kill.path),
        escalate_after=hb.config.policy.escalate_after,
        since=since.isoformat() if since else None,
        overview_href=overview_href,
        skipped=journal.skipped,
    )
    if state is not None:
        _fill_state(page, hb, state, timeline.max_tick_actions)
        _finish_open_heartbeat(timeline.slots, state)
    page.commands = _commands(hb, state, kill)
    return page


def _finish_open_heartbeat(slots: Sequence[Slot], state: AgentState) -> None:
    """A heartbeat still in progress (the runner's report at escalation) gets its sample and outcome.

    Its ``tick`` event, which carries both, is journaled after the page is
    made; ``state.json`` already holds them.
    """
    if not slots or slots[-1].heartbeats or not state.progress:
        return
    last, sample = slots[-1], state.progress[-1]
    if sample.tick == last.last_tick and last.progress is None:
        last.progress = sample.value
        last.outcome = state.status.value if state.status is not Status.ACTIVE else "ran"


def _fill_state(page: AgentPage, hb: Reported, state: AgentState, most_actions: int) -> None:
    red = hb.redact
    page.status_reason = red(state.status_reason) if state.status_reason else None
    page.ticks = state.ticks
    page.last_tick_at = state.last_tick_at.isoformat() if state.last_tick_at else None
    page.stuck_streak = state.stuck_streak
    page.escalate_after_anew = anew_limit(hb.config.policy, state.recovery)
    if state.recovery:
        r = state.recovery
        avoid = f"; avoid: {', '.join(r.avoid)}" if r.avoid else ""
        page.recovery = red(f"{r.mode.value}, attempt {r.attempts} since tick {r.since_tick}{avoid}")
    page.instructions = red(state.instructions) if state.instructions else None
    if state.escalation:
        e = state.escalation
        page.escalation = f"since {e.at.astimezone(UTC):%Y-%m-%d %H:%M:%S} UTC, tick {e.tick}"
    if hb.store.escalation_path.exists():
        page.escalation_file = str(hb.store.escalation_path)
    page.outbox = _outbox_count(hb)
    budget = hb.config.budget
    day = state.budget.day.isoformat() if state.budget.day else "today"
    page.budgets = [
        (f"actions on {day}", state.budget.actions, budget.actions_per_day),
        (f"cost on {day}", state.budget.cost, budget.cost_per_day),
        (f"model tokens on {day}", state.budget.tokens, budget.tokens_per_day),
        ("most actions in one heartbeat", most_actions, budget.actions_per_tick),
        ("ticks", state.ticks, budget.max_ticks),
    ]


def _outbox_count(hb: Reported) -> int:
    try:
        return sum(1 for entry in os.scandir(hb.store.outbox_dir) if entry.name.endswith(".json"))
    except OSError:
        return 0


def _commands(hb: Reported, state: AgentState | None, kill: str | None) -> list[tuple[str, str]]:
    """How to go on from here, as commands to copy."""
    commands: list[tuple[str, str]] = []
    if kill is not None:
        commands.append(("remove the KILL file", f"{_cli(hb, 'kill --off')}   # or: rm {hb.kill.path}"))
    if state is not None and state.status is Status.NEEDS_HUMAN:
        commands.append(("resume with a note", _cli(hb, 'resume --note "what to do differently"')))
    elif state is not None and state.status is Status.PAUSED:
        commands.append(("resume", _cli(hb, "resume")))
    elif state is not None:
        commands.append(("pause", _cli(hb, 'pause --reason "why"')))
    if kill is None:
        commands.append(("stop at once", f"touch {hb.kill.path}   # or: {_cli(hb, 'kill')}"))
    commands.append(("the whole journal", _cli(hb, "log -n 0")))
    commands.append(("refresh this page", _cli(hb, "report")))
    return commands


_ELSEWHERE = " (--out FILE writes it elsewhere, - to stdout)"


def _write(hb: Reported | None, path: Path, text: str, *, locked: bool) -> Path:
    """Write ``text`` to ``path`` atomically (0600); inside a state folder, under its lock."""
    data = text.encode("utf-8")
    problem = not_regular(path)
    if problem:  # `--out /dev/null` must not replace the device with a page
        raise UsageError(f"{path}: {problem}; give a file name (or '-' for stdout)")
    try:
        inside = hb is not None and path.resolve().parent == hb.state_dir.resolve()
        if inside and not locked and hb is not None:
            with hb.store.lock(timeout=LOCK_WAIT):
                atomic_write(path, data, mode=PRIVATE_FILE_MODE)
        else:
            atomic_write(path, data, mode=PRIVATE_FILE_MODE)
    except StateLocked:
        raise
    except OSError as exc:  # a StateWriteError: the lock could not be taken (read-only): its reason, once
        reason = exc.reason if isinstance(exc, StateWriteError) else exc.strerror or str(exc)
        raise HeartbeatError(f"{path}: could not write the report: {reason}{_ELSEWHERE}") from exc
    return path


def _existing(hb: Reported) -> None:
    """Refuse a state folder that does not exist: a report would only create it, empty."""
    if not hb.state_dir.is_dir():
        raise UsageError(f"{hb.name}: no state folder at {hb.state_dir}: nothing to report yet")


def _readable(hb: Reported) -> None:
    """Refuse a state file that cannot be read (its error, exit 2): the command's page would show it
    and exit 0, so a script would see success (an escalation's page still shows it: see
    :func:`agent_page`)."""
    _existing(hb)
    if hb.store.state_path.exists():
        hb.read_state()


def render_agent_page(
    hb: Reported,
    *,
    now: datetime,
    since: datetime | None = None,
    stretch: tuple[int, int] | None = None,
) -> str:
    """The agent's page as a string, written nowhere."""
    _existing(hb)
    return render_agent(agent_page(hb, now=now, since=since, stretch=stretch))


def write_report(
    hb: Reported,
    path: Path | None = None,
    *,
    now: datetime | None = None,
    since: datetime | None = None,
    stretch: tuple[int, int] | None = None,
    pending: Sequence[Mapping[str, Any]] = (),
    locked: bool = False,
    overview_href: str | None = None,
) -> Path:
    """Write the agent's page (default ``<state dir>/report.html``) and return its path.

    ``pending`` are events of the tick in progress, not yet in the journal;
    ``locked`` says the caller holds the state folder's lock already (the
    runner does). A failed write raises :class:`~heartbeat.base.errors.HeartbeatError` naming the report.
    """
    _existing(hb)
    now = now or datetime.now(UTC)
    target = path or report_path(hb)
    page = agent_page(hb, now=now, since=since, stretch=stretch, pending=pending, overview_href=overview_href)
    return _write(hb, target, render_agent(page), locked=locked)


def write_overview(
    heartbeats: Sequence[Reported],
    out: Path,
    *,
    now: datetime | None = None,
    since: datetime | None = None,
) -> list[Path]:
    """Write every agent's page into its state folder and the overview to ``out``; return the paths."""
    now = now or datetime.now(UTC)
    rows: list[OverviewRow] = []
    written: list[Path] = []
    for hb in heartbeats:
        if not hb.state_dir.is_dir():
            rows.append(_absent_row(hb))
            continue
        target = report_path(hb)
        back = _link(os.path.relpath(out.resolve(), target.resolve().parent))
        page = agent_page(hb, now=now, since=since, overview_href=back)
        written.append(_write(hb, target, render_agent(page), locked=False))
        rows.append(_overview_row(hb, page, now, os.path.relpath(target.resolve(), out.resolve().parent)))
    where = str(heartbeats[0].config.base_dir.resolve()) if heartbeats else "."
    html = render_overview(rows, generated_at=now.isoformat(), config=where)
    return [_write(None, out, html, locked=False), *written]


def _link(relative: str) -> str:
    """A relative path as a link: percent-encoded, so a folder ``prod:web`` is no URL scheme
    (and ``#``, ``?`` or ``%`` in a name are no fragment, query or escape)."""
    from urllib.parse import quote

    return quote(relative.replace(os.sep, "/"), safe="/")


def _overview_row(hb: Reported, page: AgentPage, now: datetime, href: str) -> OverviewRow:
    t = page.timeline
    last = parse_at(t.last_heartbeat_at) or parse_at(page.last_tick_at)
    overdue, text = _overdue(hb.config, last, now, page.kill, page.status)
    progress = [s.progress for s in t.slots if s.progress is not None][-20:]
    return OverviewRow(
        agent=hb.name,
        href=_link(href),
        status=page.status,
        status_reason=page.status_reason,
        kill=page.kill,
        ticks=page.ticks,
        last_tick_at=page.last_tick_at,
        last_heartbeat_at=t.last_heartbeat_at,
        ago=f"{_ago(now - last)} ago" if last else None,
        overdue=overdue,
        overdue_text=text,
        stuck_streak=page.stuck_streak,
        escalate_after=page.escalate_after,
        escalate_after_anew=page.escalate_after_anew,
        progress=progress,
        anomalies=sum(t.anomaly_counts.values()),
        error=page.state_error,
    )


def _absent_row(hb: Reported) -> OverviewRow:
    """An agent whose state folder does not exist yet: a row without a page."""
    return OverviewRow(
        agent=hb.name,
        href=None,
        status="new",
        status_reason=None,
        kill=None,
        ticks=0,
        last_tick_at=None,
        last_heartbeat_at=None,
        ago=None,
        overdue=None,
        overdue_text="no heartbeat yet",
        stuck_streak=0,
        escalate_after=hb.config.policy.escalate_after,
        progress=[],
        error=f"no state folder at {hb.state_dir}",
    )


def _overdue(
    config: HeartbeatConfig, last: datetime | None, now: datetime, kill: str | None, status: str | None
) -> tuple[bool | None, str]:
    """Whether no heartbeat came for two schedule periods (the dead man's switch), and in words.

    A killed or paused agent is never overdue: it is meant to be quiet.
    """
    if kill is not None:
        return None, "stopped by KILL"
    if status == "paused":
        return None, "paused"
    if last is None:
        return None, "no heartbeat yet"
    schedule = config.schedule
    due: datetime | None
    if schedule.every is not None:
        due = last + 2 * schedule.every
        text = f"(every {_ago(schedule.every)})"
    elif schedule.cron is not None:
        from ..config.trigger import make_trigger

        trigger = make_trigger(every=None, cron=schedule.cron, timezone=schedule.timezone)
        first = trigger.get_next_fire_time(None, last + timedelta(seconds=1))
        due = trigger.get_next_fire_time(first, first + timedelta(seconds=1)) if first else None
        if due is None:
            return None, "no more runs scheduled"
        text = f"(cron {schedule.cron})"
    else:
        return None, "no schedule"
    return (now > due), (f"{_ago(now - due)} late {text}" if now > due else text)


def _ago(delta: timedelta) -> str:
    seconds = int(delta.total_seconds())
    if seconds < 120:
        return f"{seconds} s"
    if seconds < 7200:
        return f"{seconds // 60} min"
    if seconds < 172800:
        return f"{seconds // 3600} h"
    return f"{seconds // 86400} d"


def make_reports(
    heartbeats: Sequence[Reported],
    *,
    out: str | None = None,
    since: str | None = None,
    stretch: str | None = None,
    now: datetime | None = None,
) -> str:
    """What ``heartbeat report`` does for these agents; returns what it prints (paths, or the page for ``-``).

    One agent: its page at ``out`` (default ``<state dir>/report.html``; ``-``
    returns the page itself). Several: each agent's page in its state folder
    and the overview at ``out`` (default ``report.html`` beside the config).
    """
    now = now or datetime.now(UTC)
    start = parse_since(since, now) if since else None
    ticks = parse_stretch(stretch) if stretch else None
    if len(heartbeats) > 1:
        if ticks is not None:
            raise UsageError("--stretch needs one agent: add --agent NAME")
        if out == "-":
            raise UsageError("--out - needs one agent: add --agent NAME")
        target = Path(out) if out else heartbeats[0].config.resolve(Path(REPORT_FILE))
        written = write_overview(heartbeats, target, now=now, since=start)
    else:
        hb = heartbeats[0]
        _readable(hb)
        if out == "-":
            return render_agent_page(hb, now=now, since=start, stretch=ticks)
        written = [write_report(hb, Path(out) if out else None, now=now, since=start, stretch=ticks)]
    return "".join(f"{path}\n" for path in written)


def write_tuning(objects: Iterable[Mapping[str, Any]], out: Path) -> Path:
    """Write the tuning page of ``replay DIR --labels FILE --json`` objects (traces, then the confusion)."""
    traces: list[Mapping[str, Any]] = []
    confusion: Mapping[str, Any] = {}
    for item in objects:
        found = item.get("confusion")
        if isinstance(found, Mapping) and "trace" not in item:
            confusion = found
        else:
            traces.append(item)
    return _write(None, out, render_tuning(traces, confusion), locked=False)
