"""What a tick means: a pure function from what happened to the new state, notices, events and outcome.

:func:`settle` is the tick's functional core. The runner (and ``replay``)
gather the facts (the state as loaded, the policy's decision, the tick's
anomalies, a budget breach, ``now``, the config) and hand them over; settle
returns a :class:`Settlement`, and the caller performs it: save the state,
queue the notices, write the events to the journal, print the outcome.
Nothing here reads a clock or a file, so a live tick and a replayed one
cannot drift apart.

The rules, in order::

    status needs_human        -> outcome needs_human (4); a reminder notice when one is due
    status paused             -> outcome paused (0)
    budget spent (no step)    -> pause + a budget notice
    a decision                -> streak, recovery and instructions from it; escalate ->
                                 needs_human + an escalation notice (4)
      then a budget breach    -> pause + a budget notice (unless escalated)
      then KILL mid-step      -> outcome killed (3): the step's work is kept
    a step error              -> exit 1 (outcome ran)
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from ..base.errors import EXIT_CODES, worst_exit_code
from ..config.file import BudgetConfig, HeartbeatConfig
from .budget import until_reset
from .models import (
    ANOMALY_LIMIT,
    AgentState,
    Anomaly,
    Decision,
    Escalation,
    Notification,
    Status,
    printable,
)

__all__ = ["Settlement", "TickFacts", "Where", "settle"]


@dataclass(frozen=True)
class Where:
    """The names a human is pointed to in messages: the agent, its files, how to resume."""

    agent: str
    escalation_file: str
    kill_file: str
    resume_hint: str
    report_file: str = "report.html"


@dataclass(frozen=True)
class TickFacts:
    """What the step did this tick (empty when it was not called)."""

    tick: int | None = None
    actions: int = 0
    progress: float | None = None
    progress_error: str | None = None
    step_error: str | None = None
    killed: str | None = None
    """The reason of the KILL file, else of the fleet stop, when it appeared while the step ran."""
    stopped: str | None = None
    """With ``killed``: the tick's message, in the words every part uses for a stop (the tick
    layer's :func:`~heartbeat.state.killswitch.stopped_by`, which this pure layer cannot import)."""
    switch: str | None = None
    """With ``killed``: which stop said it, as ``stopped_by`` names it (``the KILL file <path>``,
    ``the fleet stop <where>``); the journal's kill event keeps it."""
    failed: int = 0
    """Actions of this tick that reported an error."""
    first_error: str | None = None
    """The first of those errors."""
    pending_delivery: bool = False
    """Notifications of this agent still wait to be delivered (no reminder piles on top)."""
    tokens: int = 0
    """Model tokens the step's model calls used."""
    cost: float = 0.0
    """Dollars the step spent (model calls and actions' ``cost``)."""
    unpriced: int = 0
    """Model calls with no known price (their tokens count, their dollars are not in ``cost``)."""
    turn: bool = False
    """The heartbeat was a live agent's next model turn, not a scheduled wake-up (a Session's)."""
    heard: bool = True
    """A recovery could reach the agent (False: an observer's, as the OTel processor's Session)."""
    baseline: float | None = None
    """With ``progress``: the metric before the step, when it was measured (``ProgressSample.baseline``)."""


@dataclass
class Settlement:
    """What the caller performs: save ``state``, queue ``notices``, journal ``events``, report the outcome."""

    state: AgentState
    outcome: str
    exit_code: int
    message: str
    notices: list[Notification] = field(default_factory=list)
    events: list[dict[str, Any]] = field(default_factory=list)
    anomalies: list[Anomaly] = field(default_factory=list)
    save: bool = True
    notifiers: list[str] = field(default_factory=list)
    """The configured notifiers' names (each notice goes to every one of them)."""


def settle(
    state: AgentState,
    decision: Decision | None,
    anomalies: Sequence[Anomaly],
    breach: Anomaly | str | None,
    now: datetime,
    config: HeartbeatConfig,
    *,
    where: Where,
    facts: TickFacts = TickFacts(),
    explain: bool = True,
) -> Settlement:
    """Settle one tick. ``state`` is not changed: the new one is a copy.

    ``decision`` is None when the step was not called (waiting, paused,
    budget spent before it); ``breach`` is the budget anomaly the step ran
    into, or the reason the budget was spent before it. ``explain=False``
    (replay) skips the anomaly events and the one-line message of a tick
    that ran: the new state and the notices are the same.
    """
    new = state.model_copy()
    new.notices = list(state.notices)
    out = Settlement(new, "ran", EXIT_CODES["ran"], "", notifiers=[n.name for n in config.notify])
    if decision is None:
        if new.status is Status.NEEDS_HUMAN:
            _remind(out, now, config, where, facts.pending_delivery)
            out.outcome, out.exit_code = "needs_human", EXIT_CODES["needs_human"]
            since = _when(new)
            out.message = (
                f"waiting for a human since {since}; see {where.escalation_file}, then `{where.resume_hint}`"
            )
            out.save = bool(new.notices)
        elif new.status is Status.PAUSED:
            out.outcome, out.exit_code, out.save = "paused", EXIT_CODES["paused"], False
            out.message = f"paused: {new.status_reason or 'by hand'}; `heartbeat resume` goes on"
        elif breach is not None:
            _pause_for_budget(out, _reason(breach), now, where, config.budget)
        return out
    new.anomalies = [*state.anomalies, *anomalies][-ANOMALY_LIMIT:]
    if anomalies:  # a new dict: the copy shares the old state's
        new.anomaly_totals = dict(state.anomaly_totals)
        for anomaly in anomalies:
            new.anomaly_totals[anomaly.kind] = new.anomaly_totals.get(anomaly.kind, 0) + 1
    out.anomalies = list(anomalies)
    if explain:
        out.events += [{"event": "anomaly", **a.model_dump(mode="json")} for a in anomalies]
    recovering = state.recovery is not None
    _apply(out, decision, anomalies, now, where)
    if breach is not None and new.status is Status.ACTIVE:
        if isinstance(breach, Anomaly):
            out.anomalies.append(breach)
        _pause_for_budget(out, _reason(breach), now, where, config.budget)
    if facts.step_error:
        out.exit_code = worst_exit_code((out.exit_code, EXIT_CODES["step_error"]))
    if facts.killed is not None:
        # KILL (or the fleet stop) appeared mid-step: the step finished, its work is saved,
        # nothing more runs.
        kill = {"event": "kill", "reason": facts.killed, "by": facts.switch, "during_step": True}
        out.events.append({k: v for k, v in kill.items() if v is not None})
        out.outcome, out.exit_code = "killed", EXIT_CODES["killed"]
        out.message = facts.stopped or facts.killed
    elif not out.message and explain:
        out.message = describe(facts, decision, out.anomalies)
        if recovering and decision.action == "continue" and decision.recovery is None:
            out.message += "; recovered: no anomaly, instructions cleared"
        elif recovering and decision.action == "continue" and not anomalies:
            # One quiet heartbeat inside a stuck stretch: the recovery holds (policy).
            out.message += f"; quiet: {decision.reason}"
    return out


def _apply(
    out: Settlement, decision: Decision, anomalies: Sequence[Anomaly], now: datetime, where: Where
) -> None:
    """Carry out the policy's decision on the state."""
    state = out.state
    state.stuck_streak = decision.stuck_streak
    state.recovery = decision.recovery
    state.instructions = decision.instructions
    out.events.append(
        {
            "event": "decision",
            "decision": decision.action,
            "stuck_streak": decision.stuck_streak,
            "instructions": decision.instructions,
            # observe mode: what enforce mode would have done, for status and log to show.
            **({"observed": decision.observed, "reason": decision.reason} if decision.observed else {}),
        }
    )
    if decision.action != "escalate":
        return
    from .escalation import notification_text, payload

    state.status = Status.NEEDS_HUMAN
    state.status_reason = decision.reason or "stuck after repeated recoveries"
    key = f"{where.agent}-escalation-{state.ticks}"
    state.escalation = Escalation(
        at=now,
        tick=state.ticks,
        reason=state.status_reason,
        key=key,
        kinds=sorted({a.kind for a in anomalies}),
    )
    headline = f"needs a human: {state.status_reason}"
    _notice(
        out,
        key=key,
        kind="escalation",
        reason=state.status_reason,
        now=now,
        text=notification_text(
            where.agent, headline, anomalies, f"Resume: {where.resume_hint}\nReport: {where.report_file}"
        ),
        payload=payload(state, anomalies),
        agent=where.agent,
    )
    out.events.append({"event": "escalation", "key": key, "reason": state.status_reason})
    out.outcome, out.exit_code = "needs_human", EXIT_CODES["needs_human"]
    out.message = (
        f"escalated to a human: {state.status_reason}\n"
        f"  what happened: {where.escalation_file}; as a page: {where.report_file}\n"
        f"  to go on: `{where.resume_hint}`; to stop for good: touch {where.kill_file}"
    )


def _pause_for_budget(
    out: Settlement, reason: str, now: datetime, where: Where, config: BudgetConfig
) -> None:
    from .escalation import notification_text, payload

    state = out.state
    state.status, state.status_reason = Status.PAUSED, reason
    out.events.append({"event": "budget", "reason": reason})
    _notice(
        out,
        key=f"{where.agent}-budget-{state.ticks}-{now.date().isoformat()}",
        kind="budget",
        reason=reason,
        now=now,
        text=notification_text(
            where.agent, f"paused: {reason}", [], _resume_after(reason, now, where, config)
        ),
        payload=payload(state, []),
        agent=where.agent,
    )
    out.outcome, out.exit_code = "paused", EXIT_CODES["paused"]
    out.message = f"paused: {reason}"


def _remind(out: Settlement, now: datetime, config: HeartbeatConfig, where: Where, pending: bool) -> None:
    """Remind people of an open escalation, at most once per ``reminder_every``."""
    state = out.state
    escalation = state.escalation
    if escalation is None or state.notices or pending:
        return  # the first message has not even gone out: a reminder would only pile up
    last = escalation.last_reminder_at or escalation.at
    if now - last < config.escalation.reminder_every:
        return
    from .escalation import notification_text, payload

    state.escalation = escalation = escalation.model_copy(update={"last_reminder_at": now})
    waited = now - escalation.at
    _notice(
        out,
        key=f"{escalation.key}-reminder-{int(waited.total_seconds())}",
        kind="reminder",
        reason=escalation.reason,
        now=now,
        text=notification_text(
            where.agent,
            f"still needs a human ({_ago(waited)}): {escalation.reason}",
            [],
            f"Resume: {where.resume_hint}",
        ),
        payload=payload(state, state.anomalies[-5:]),
        agent=where.agent,
    )


def _notice(out: Settlement, *, now: datetime, **fields: Any) -> None:
    """Decide a notification: it rides in the state until the state is saved, then goes to outbox/."""
    note = Notification(created_at=now, **fields)
    out.state.notices.append(note)
    out.notices.append(note)
    out.events.append({"event": "notify", "kind": note.kind, "key": note.key, "notifiers": out.notifiers})


def describe(facts: TickFacts, decision: Decision | None, anomalies: Sequence[Anomaly]) -> str:
    """One line for a tick that ran: actions, progress, errors, what the policy decided."""
    parts = [f"tick {facts.tick}: {facts.actions} action(s)"]
    # The agent's texts in it keep to the line: a line break in an error must not forge another.
    if facts.failed:  # failures in plain sight: "3 actions, 1 failed: ConnectError ..."
        parts[0] += f", {facts.failed} failed: {printable(facts.first_error or '')}"
    if facts.tokens or facts.cost:
        spent = f"{facts.tokens} tokens, ${facts.cost:.4f}" if facts.tokens else f"${facts.cost:.4f}"
        # Never priced as zero in silence: the dollars leave out calls no price was known for.
        parts.append(f"{spent}, {facts.unpriced} call(s) with no price" if facts.unpriced else spent)
    if facts.progress is not None:
        parts.append(f"progress {facts.progress:g}")
    if facts.progress_error:
        parts.append(f"metric error: {printable(facts.progress_error)}")
    if facts.step_error:
        parts.append(f"step raised {printable(facts.step_error)}")
    if decision is not None and decision.action != "continue":
        kinds = ", ".join(a.kind for a in anomalies)
        parts.append(f"stuck ({kinds}) -> {decision.action}, streak {decision.stuck_streak}")
    elif decision is not None and decision.observed:
        kinds = ", ".join(a.kind for a in anomalies) or "no anomaly"
        parts.append(f"observe mode: {kinds}, would {decision.observed}, streak {decision.stuck_streak}")
    return "; ".join(parts)


def _resume_after(reason: str, now: datetime, where: Where, config: BudgetConfig) -> str:
    """How a human goes on after a budget pause: when a limit per day lets the agent go on, then how."""
    resets = until_reset(reason, now, config)
    resume = f"Resume: {where.resume_hint}"
    return f"{resets[0].upper()}{resets[1:]}.\n{resume}" if resets else resume


def _reason(breach: Anomaly | str) -> str:
    return breach.message if isinstance(breach, Anomaly) else breach


def _when(state: AgentState) -> str:
    at = state.escalation.at if state.escalation else state.last_tick_at
    return at.isoformat(timespec="seconds") if at else "?"


def _ago(delta: timedelta) -> str:
    seconds = int(delta.total_seconds())
    if seconds < 3600:
        return f"{seconds // 60} min"
    if seconds < 86400:
        return f"{seconds // 3600} h"
    return f"{seconds // 86400} d"
