"""``heartbeat status``: one agent's report, the fleet's one-liners, and the dead man's switch.

An agent is *overdue* when no heartbeat was seen for ``periods`` schedule
periods (or for ``max_age``): cron stopped calling ``tick``, the host is
down or ``run`` died. The last heartbeat seen is the later of the last tick
that called the step and the journal's last event a heartbeat wrote (a tick
that waits for a human or is paused still writes its line; a person's
``pause`` or ``resume`` is no heartbeat), so a waiting agent whose cron
still fires is not overdue. A paused or killed agent is never overdue: it is
meant to be quiet.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any

from ..base.errors import EXIT_CODES, ConfigError, HeartbeatError, UsageError
from ..config.file import ScheduleConfig
from ..core.budget import roll_over
from ..core.models import printable, printable_lines
from ..core.policy import anew_limit
from ..state.journal import Journal
from .style import Style

if TYPE_CHECKING:
    from ..core.models import AgentState
    from ..tick.runner import Heartbeat

__all__ = [
    "OVERDUE_EXIT",
    "StatusReport",
    "agent_report",
    "due_by",
    "fleet_reports",
    "render_detail",
    "render_fleet",
    "require_state_dir",
]

OVERDUE_EXIT = EXIT_CODES["overdue"]
"""``status`` exits with this when an agent is overdue (and nothing worse applies)."""


def require_state_dir(hb: Heartbeat) -> None:
    """Refuse (exit 2) when the agent's state folder does not exist: a command in the wrong folder."""
    if not hb.state_dir.is_dir():
        raise UsageError(
            f"{hb.name}: no state folder at {hb.state_dir} (nothing has run here; wrong folder? "
            "give --config FILE or --state-dir DIR)"
        )


def due_by(
    schedule: ScheduleConfig, last_seen: datetime, *, periods: int = 2, max_age: timedelta | None = None
) -> datetime | None:
    """When the next heartbeat is overdue: ``max_age`` or ``periods`` schedule periods after ``last_seen``.

    A deadline past the calendar's end (a last tick stamped near year 9999
    by a clock gone wrong or a hand edit) is the calendar's end: not overdue.
    """
    try:
        return _due_by(schedule, last_seen, periods, max_age)
    except OverflowError:
        return datetime.max.replace(tzinfo=UTC)


def _due_by(
    schedule: ScheduleConfig, last_seen: datetime, periods: int, max_age: timedelta | None
) -> datetime | None:
    if max_age is not None:
        return last_seen + max_age
    if schedule.every is not None:
        return last_seen + periods * schedule.every
    if schedule.cron is not None:
        from apscheduler.triggers.cron import CronTrigger  # status only; never a tick

        try:
            trigger = CronTrigger.from_crontab(schedule.cron, timezone=schedule.timezone)
        except ValueError as exc:  # the config refused it already (heartbeat.cronexpr); kept as a guard
            raise ConfigError(f"schedule.cron {schedule.cron!r}: {exc}") from None
        fire: datetime | None = last_seen
        for _ in range(periods):
            assert fire is not None
            fire = trigger.get_next_fire_time(None, fire + timedelta(seconds=1))
            if fire is None:
                return None
        return fire
    return None


@dataclass
class StatusReport:
    """What ``status`` knows about one agent; ``to_json`` is ``status --json``."""

    agent: str
    state_dir: str
    status: str
    status_reason: str | None
    killed: str | None
    fleet_stop: str | None
    ticks: int
    last_tick_at: str | None
    last_seen_at: str | None
    overdue: bool | None
    due_by: str | None
    stuck_streak: int
    escalate_after: int
    escalate_after_anew: int | None
    """The streak that calls a human while the calls bring new results, for a stretch found on a flat
    metric alone (``escalate_after + flat_grace``); else None."""
    recovery: dict[str, Any] | None
    instructions: str | None
    progress: list[float] = field(default_factory=list)
    anomalies: list[dict[str, Any]] = field(default_factory=list)
    outbox: int = 0
    spend: dict[str, Any] = field(default_factory=dict)
    """Today's spend: ``tokens``, ``cost``, the ``limits`` set, and ``models`` (each with its tokens,
    ``cost`` and ``unpriced`` calls, counted in tokens only)."""
    mode: str = "enforce"
    """``[policy] mode``: ``observe`` detects and journals, but never instructs nor escalates."""
    observed: str | None = None
    """Observe mode: what enforce mode would be doing now (its last decision), else None."""
    observed_since: int | None = None
    """Observe mode: the tick from which enforce mode would have done that, in this stretch."""
    blocked: str | None = None
    """Why the next tick would stop before its step (the state folder or the journal cannot take
    its writes: a full disk, a read-only remount), else None."""

    @property
    def exit_code(self) -> int:
        """3 killed, 4 waiting for a human, 6 overdue or blocked, else 0."""
        if self.killed or self.fleet_stop:
            return 3
        if self.status == "needs_human":
            return 4
        return OVERDUE_EXIT if self.overdue or self.blocked else 0

    def to_json(self) -> dict[str, Any]:
        """A JSON-able dict, stable for scripts."""
        return asdict(self)


def _stamp(at: datetime | None) -> str | None:
    return at.isoformat() if at else None


_BY_A_PERSON = frozenset({"pause", "resume"})
"""Journal events a person's command writes: no heartbeat of the agent's."""


def _last_written(hb: Heartbeat) -> datetime | None:
    """When a heartbeat last wrote the journal (a tick that waits for a human or is paused still
    writes its line); a person's ``pause`` or ``resume`` is not a heartbeat seen."""
    try:
        events = Journal(hb.store.journal_path).tail(50)
    except (OSError, HeartbeatError):  # a journal that cannot be read (a FIFO): the last tick says it
        return None
    for event in reversed(events):
        if event.get("event") not in _BY_A_PERSON and isinstance(event.get("at"), str):
            try:
                at = datetime.fromisoformat(event["at"])
            except ValueError:
                continue
            return at if at.tzinfo else at.replace(tzinfo=UTC)
    return None


def agent_report(
    hb: Heartbeat,
    now: datetime,
    *,
    periods: int = 2,
    max_age: timedelta | None = None,
    unran: bool = False,
) -> StatusReport:
    """The report of one agent; its state folder must exist unless ``unran`` (a fleet's agent
    that has not ticked yet: its folder is made by its first tick)."""
    if not unran:
        require_state_dir(hb)
    state = hb.read_state()
    kill = hb.kill.reason()
    fleet = hb.shared_stop_reason()
    seen = [at for at in (state.last_tick_at, _last_written(hb)) if at is not None]
    last_seen = max(seen) if seen else None
    quiet = kill is not None or fleet is not None or state.status.value == "paused"
    # A stopped or paused agent is meant to be quiet: no deadline, rather than one long past.
    deadline = None
    if last_seen and not quiet:
        deadline = due_by(hb.config.schedule, last_seen, periods=periods, max_age=max_age)
    overdue = None if deadline is None else now > deadline
    values = [s.value for s in state.progress if s.value is not None]
    blocked = None if unran else hb.store.blocked()  # what the next tick would stop on
    outbox = 0
    if hb.outbox_waiting():
        outbox = len(hb.outbox().pending())
    return StatusReport(
        spend=spend_today(hb, state, now),
        agent=hb.name,
        state_dir=str(hb.state_dir),
        status=state.status.value,
        # state.json is a file anyone can write: its reason reaches a terminal escaped, on one line
        status_reason=None if state.status_reason is None else printable(state.status_reason),
        killed=kill,
        fleet_stop=fleet,
        ticks=state.ticks,
        last_tick_at=_stamp(state.last_tick_at),
        last_seen_at=_stamp(last_seen),
        overdue=overdue,
        due_by=_stamp(deadline),
        stuck_streak=state.stuck_streak,
        escalate_after=hb.config.policy.escalate_after,
        escalate_after_anew=anew_limit(hb.config.policy, state.recovery),
        recovery=state.recovery.model_dump(mode="json") if state.recovery else None,
        instructions=state.instructions,
        progress=values[-20:],
        anomalies=[{**a.model_dump(mode="json"), "at": _stamp(a.at)} for a in state.anomalies[-5:]],
        outbox=outbox,
        mode=hb.config.policy.mode,
        blocked=None if blocked is None else printable(blocked),
        **(_observed(hb) if hb.config.policy.mode == "observe" else {}),
    )


def spend_today(hb: Heartbeat, state: AgentState, now: datetime) -> dict[str, Any]:
    """Today's tokens and dollars against the limits, by model (``status --json``'s ``spend``)."""
    config = hb.config.budget
    counters = roll_over(state.budget, now, config)  # a day gone by counts nothing today
    limits = {
        name: getattr(config, name)
        for name in ("tokens_per_day", "cost_per_day", "tokens_per_tick", "cost_per_tick")
        if getattr(config, name) is not None
    }
    models = {
        model: {**spend.model_dump(), "tokens": spend.tokens} for model, spend in counters.models.items()
    }
    return {
        "day": counters.day.isoformat() if counters.day else None,
        "tokens": counters.tokens,
        "cost": counters.cost,
        "limits": limits,
        "models": models,
        "unpriced": sorted(model for model, spend in counters.models.items() if spend.unpriced),
    }


def _observed(hb: Heartbeat) -> dict[str, Any]:
    """What enforce mode would be doing: the last decision's ``observed``, and since which tick."""
    decisions = [e for e in Journal(hb.store.journal_path).tail(200) if e.get("event") == "decision"]
    if not decisions or not decisions[-1].get("observed"):
        return {}
    observed = decisions[-1]["observed"]
    since = decisions[-1].get("tick")
    for event in reversed(decisions):
        if event.get("observed") != observed:
            break
        since = event.get("tick")
    return {"observed": observed, "observed_since": since if isinstance(since, int) else None}


def fleet_reports(
    heartbeats: Sequence[Heartbeat], now: datetime, *, max_age: timedelta | None = None
) -> tuple[list[StatusReport | tuple[str, str]], list[int]]:
    """Every agent's report, or ``(name, error)`` for one that cannot report; and their exit codes."""
    rows: list[StatusReport | tuple[str, str]] = []
    codes = []
    for hb in heartbeats:  # one broken agent is a line of its own, not the end of the fleet's view
        try:
            report = agent_report(hb, now, max_age=max_age, unran=True)
        except HeartbeatError as exc:
            rows.append((hb.name, str(exc).removeprefix(f"{hb.name}: ")))
            codes.append(exc.exit_code)
            continue
        rows.append(report)
        codes.append(report.exit_code)
    return rows, codes


def _short(at: str | None) -> str:
    return at[:19].replace("T", " ") if at else "never"


def _status_parts(report: StatusReport, style: Style) -> tuple[str, str]:
    """The status as a word with its symbol, and its colour."""
    if report.killed or report.fleet_stop:
        return f"{style.symbol('bad')} KILLED", "red"
    if report.status == "needs_human":
        return f"{style.symbol('warn')} needs_human", "red"
    if report.overdue:
        return f"{style.symbol('warn')} OVERDUE", "red"
    if report.blocked:
        return f"{style.symbol('bad')} BLOCKED", "red"
    if report.status == "paused":
        return f"{style.symbol('warn')} paused", "yellow"
    observe = " (observe)" if report.mode == "observe" else ""
    return f"{style.symbol('ok')} {report.status}{observe}", "yellow" if report.stuck_streak else "green"


def _status_word(report: StatusReport, style: Style) -> str:
    return style.paint(*_status_parts(report, style))


def render_detail(report: StatusReport, style: Style) -> str:
    """The multi-line view of one agent."""
    reason = f" ({report.status_reason})" if report.status_reason else ""
    if report.blocked:
        reason += f"; the next tick stops before its step: {report.blocked}"
    if report.overdue:
        seen = f"OVERDUE: no heartbeat since {_short(report.last_seen_at)} (due by {_short(report.due_by)})"
    elif report.due_by:
        seen = f"ok (next due by {_short(report.due_by)})"
    elif report.killed or report.fleet_stop:
        seen = "not checked (stopped)"
    elif report.status == "paused":
        seen = "not checked (paused)"
    elif report.last_seen_at is None:  # not its schedule's fault: nothing ran to be late
        seen = "not checked (no heartbeat yet)"
    else:
        seen = "not checked (no schedule; give --max-age)"
    recovery = report.recovery
    streak = f"stuck streak {report.stuck_streak} of {report.escalate_after}"
    if report.escalate_after_anew is not None:
        streak += f" ({report.escalate_after_anew} while its calls bring new results)"
    if report.status == "needs_human":  # escalated: maybe before the streak's limit (a recovery ignored)
        streak = f"stuck streak {report.stuck_streak} (escalated; the limit is {report.escalate_after})"
    doing = f"{recovery['mode']} (attempt {recovery['attempts']})" if recovery else "none"
    if report.mode == "observe":  # nothing was injected nor escalated: say what enforce mode would do
        reason += ": detects and journals, never instructs nor escalates"
        streak = f"stuck streak {report.stuck_streak} (enforce mode escalates at {report.escalate_after})"
        if report.observed:
            at = f" at tick {report.observed_since}" if report.observed_since is not None else ""
            would = "have escalated" if report.observed == "escalate" else report.observed
            doing = f"enforce mode would {would}{at}; nothing injected"
        elif recovery:
            doing = f"enforce mode would {doing}; nothing injected"
    lines = [
        f"agent        {report.agent}   ({report.state_dir})",
        f"status       {_status_word(report, style)}{reason}",
        f"KILL         {'PRESENT: ' + report.killed if report.killed else 'absent'}",
        *([f"fleet stop   ENGAGED: {report.fleet_stop}"] if report.fleet_stop else []),
        f"ticks        {report.ticks}   last {_short(report.last_tick_at)}",
        f"heartbeat    {seen}",
        streak,
        f"recovery     {doing}",
        # the journal's instructions quote what the agent did, a resume's note what a person typed:
        # either reaches the terminal escaped, its later lines indented under the field
        f"instructions {printable_lines(report.instructions, ' ' * 13) if report.instructions else 'none'}",
        f"progress     {style.sparkline(report.progress)} {report.progress[-1]:g}"
        if report.progress
        else "progress     no samples",
    ]
    lines += _spend_lines(report.spend)
    if report.outbox:
        lines.append(style.paint(f"outbox       {report.outbox} notification(s) not delivered yet", "yellow"))
    if report.anomalies:
        lines.append("anomalies")
        lines += [f"  tick {a['tick']:>4}  {a['kind']:<11} {a['message']}" for a in report.anomalies]
    return "\n".join(lines)


def _spend_lines(spend: dict[str, Any]) -> list[str]:
    """``spend today`` and one line per model, when anything was spent or a spend limit is set."""
    if not spend or not (spend.get("tokens") or spend.get("cost") or spend.get("limits")):
        return []
    limits = spend.get("limits", {})
    tokens = f"{spend['tokens']:,} tokens"
    if "tokens_per_day" in limits:
        tokens += f" of {limits['tokens_per_day']:,}"
    cost = f"${spend['cost']:.4f}"
    if "cost_per_day" in limits:
        cost += f" of ${limits['cost_per_day']:g}"
    unpriced = sum(used["unpriced"] for used in spend.get("models", {}).values())
    if unpriced:  # dollars that are not there: a cost limit cannot see these calls
        blind = (
            ", which the cost limit cannot count (give them [budget.prices])"
            if "cost_per_day" in limits
            else ""
        )
        cost += f" and {unpriced} call(s) with no price{blind}"
    lines = [f"spend today  {tokens}, {cost}"]
    for model, used in sorted(spend.get("models", {}).items()):
        cached = f" ({used['cached']:,} cached)" if used["cached"] else ""
        price = f"${used['cost']:.4f}"
        if used["unpriced"]:
            price = (
                "no price: counted in tokens only"
                if used["unpriced"] == used["calls"]
                else price + " (partly priced)"
            )
        lines.append(
            f"  {model:<24} {used['calls']} call(s), {used['input']:,} in{cached}, "
            f"{used['output']:,} out, {price}"
        )
    return lines


def render_fleet(reports: Sequence[StatusReport | tuple[str, str]], style: Style) -> str:
    """One line per agent: status, last tick, streak, outbox, progress; ``(name, error)`` for a broken one."""
    header = ["AGENT", "STATUS", "LAST TICK", "TICKS", "STREAK", "OUTBOX", "PROGRESS"]
    rows: list[tuple[list[str], str | None]] = [(header, None)]
    for item in reports:
        if isinstance(item, tuple):
            rows.append(([item[0], f"{style.symbol('bad')} error", item[1], "", "", "", ""], "red"))
            continue
        word, tint = _status_parts(item, style)
        last = item.progress[-1] if item.progress else None
        cells = [
            item.agent,
            word,
            _short(item.last_tick_at),
            str(item.ticks),
            f"{item.stuck_streak}/{item.escalate_after}"
            + (f" ({item.escalate_after_anew})" if item.escalate_after_anew is not None else "")
            if item.status != "needs_human"
            else f"{item.stuck_streak} (escalated)",
            str(item.outbox),
            f"{style.sparkline(item.progress[-10:])} {last:g}" if last is not None else "-",
        ]
        rows.append((cells, tint))
    widths = [max(len(cells[i]) for cells, _ in rows) for i in range(len(header))]
    lines = []
    for cells, paint in rows:
        padded = [cell.ljust(width) for cell, width in zip(cells, widths, strict=True)]
        if paint:  # padded first, painted after: escape codes must not count as width
            padded[1] = style.paint(padded[1], paint)
        lines.append("  ".join(padded).rstrip())
    return "\n".join(lines)
