"""Replay a recorded trace through the detectors and the policy, exactly as a live run would.

A trace has one JSON object per heartbeat (the README's "Tuning with replay")::

    {"progress": 0.25, "actions": [{"tool": "search", "args": {"q": "x"}, "output": "3 hits"}]}

``progress`` may be null or absent; ``actions``, ``args``, ``output``,
``error`` (and ``cost``) may be absent; an optional ``at`` (ISO 8601; UTC
when it has no offset) gives the heartbeat's time, else a synthetic clock
ticks from 2000-01-01T00:00Z by the configured interval (30 minutes when
none). Keys the format does not define are ignored, so traces written by
other tools replay as they are. Blank lines are skipped but counted, so a
:class:`~heartbeat.base.errors.TraceError` names the line as an editor shows it.

Each heartbeat runs like the runner's: a :class:`~heartbeat.detect.monitor.Monitor`
seeded from the state the previous heartbeat left (bounded history,
progress samples, action count), every action recorded, the progress sample
added, then :func:`~heartbeat.core.policy.decide`. Budgets do not stop a replay:
each heartbeat's spend (its ``usage``: model calls, priced as a live tick
prices them, and its actions' ``cost``) is added up by budget day, and the
heartbeat at which ``[budget]`` would have stopped the run is marked. The
replay stops after the heartbeat whose decision is ``escalate``, unless the
next one is the first after a ``heartbeat resume`` (a journal marks it: the
streak, the recovery and the progress samples then start afresh, as live).
A journal's actions are recorded with the keys the live run computed
(:meth:`~heartbeat.detect.monitor.Monitor.record_keys`), not computed again. An ``at``
so late that the next heartbeat would fall past year 9999 is a bad line.
Every secret the config knows is masked (``***``) in the actions before
they are recorded, so no replay output (table, JSON, tuning page) shows
one that the trace holds, as a live tick's files would not.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..base.errors import TraceError
from ..config.file import HeartbeatConfig
from ..core.budget import overspent, roll_over
from ..core.models import AgentState, Anomaly, BudgetCounters, Decision
from ..core.policy import decide, unheard
from ..core.settle import Where, settle
from ..detect.detectors import build_detectors
from ..detect.monitor import Monitor
from .trace import KeyedAction, ResumedLine, TraceAction, TraceLine, load_any, load_trace

if TYPE_CHECKING:
    from ..core.prices import Pricer

__all__ = [
    "SYNTHETIC_START",
    "ReplayTick",
    "TraceAction",
    "TraceLine",
    "load_any",
    "load_trace",
    "render_json",
    "render_table",
    "replay",
    "replay_lines",
]

SYNTHETIC_START = datetime(2000, 1, 1, tzinfo=UTC)
"""The time of the first heartbeat of a trace that gives no ``at``."""

_DEFAULT_INTERVAL = timedelta(minutes=30)
_REPLAY = Where("replay", "ESCALATION.md", "KILL", "heartbeat resume")


@dataclass(frozen=True)
class ReplayTick:
    """One replayed heartbeat: what it recorded, what tripped, what the policy decided."""

    tick: int
    at: datetime
    line: int
    first_action: int
    actions: int
    progress: float | None
    anomalies: tuple[Anomaly, ...]
    decision: Decision
    tokens: int = 0
    """Model tokens of the heartbeat's model calls (the trace's ``usage``)."""
    cost: float = 0.0
    """Dollars of those calls and of the actions' ``cost``; unpriced models count 0 here."""
    unpriced: int = 0
    """How many of those calls had no price (their dollars are not in ``cost``)."""
    budget: str | None = None
    """Set on the heartbeat at which the configured ``[budget]`` would have stopped the run (the first)."""


def replay(
    source: Path | Iterable[str],
    config: HeartbeatConfig,
    *,
    fmt: str | None = None,
    per_heartbeat: int | None = None,
) -> Iterator[ReplayTick]:
    """Replay a trace file (or its lines), yielding one :class:`ReplayTick` per heartbeat.

    ``fmt`` names an import format (see :mod:`heartbeat.formats`; detected
    when None) and ``per_heartbeat`` regroups the actions. The whole trace
    is checked first, so a bad line raises TraceError here, before anything
    is replayed.
    """
    path, lines = load_any(source, fmt=fmt, per_heartbeat=per_heartbeat)
    return replay_lines(path, lines, config)


def replay_lines(
    path: str, lines: list[tuple[int, TraceLine]], config: HeartbeatConfig
) -> Iterator[ReplayTick]:
    """Replay already loaded heartbeats (see :func:`load_any`); ``path`` names them in errors."""
    interval = config.schedule.every or _DEFAULT_INTERVAL
    times: list[datetime] = []
    clock = SYNTHETIC_START
    for number, line in lines:
        now = line.at if line.at is not None else clock
        try:
            clock = now + interval
        except OverflowError:
            raise TraceError(
                path, number, f"at: {now.isoformat()} is too late: the next heartbeat would be past year 9999"
            ) from None
        times.append(now)
    return _run(path, lines, times, config)


def _run(
    path: str, lines: list[tuple[int, TraceLine]], times: list[datetime], config: HeartbeatConfig
) -> Iterator[ReplayTick]:
    """:func:`_replay`, where input nested too deeply for Python is a bad line (TraceError), not a crash."""
    number = lines[0][0] if lines else 0
    ticks = _replay(lines, times, config)
    while True:
        try:
            tick = next(ticks)
        except StopIteration:
            return
        except RecursionError:
            line = next((n for n, _ in lines if n > number), number)
            raise TraceError(path, line, "nested too deeply to replay") from None
        number = tick.line
        yield tick


def _replay(
    lines: list[tuple[int, TraceLine]], times: list[datetime], config: HeartbeatConfig
) -> Iterator[ReplayTick]:
    detectors = build_detectors(config.detectors, search_path=config.base_dir)
    # One Monitor for the whole trace: at each heartbeat it is re-seeded as the runner's
    # would be from the saved state (start_tick(reseed=True) rebuilds only the trackers
    # whose answers could differ), instead of being built again from scratch.
    monitor = Monitor(config.detectors, detectors=detectors)
    secrets = config.secrets()
    state = AgentState()  # all that decide() reads of it: the streak, the recovery, the samples
    escalated = False
    spend = _Spend(config)
    observed = unheard(config.policy)
    for tick, ((number, line), now) in enumerate(zip(lines, times, strict=True), 1):
        if isinstance(line, ResumedLine):  # a human resumed the agent here (a journal says so)
            state = AgentState()
            monitor.reset_progress()
        elif escalated:
            return
        # A line without its time may have been a turn as well as a wake-up (see Monitor.start_tick).
        monitor.start_tick(tick, reseed=True, turn=line.turn or (None if line.at is None else False))
        first = monitor.actions_total + 1
        record = monitor.record
        for action in line.actions:
            if isinstance(action, KeyedAction):  # a journal's: the keys the live run computed
                keys, error = action.keys, action.error
                if secrets:
                    keys, error = _masked_keys(keys, error, secrets)
                monitor.record_keys(action.tool, keys, error=error, cost=action.cost, now=now)
                continue
            if secrets:
                action = _masked(action, secrets)
            record(
                action.tool,
                action.args,
                output=action.output,
                error=action.error,
                cost=action.cost,
                now=now,
            )
        monitor.add_progress(line.progress, now=now, baseline=line.baseline)
        anomalies = tuple(monitor.tick_anomalies)
        state.progress = monitor.progress  # as the runner's state holds them when it decides
        # An observed run heard no recovery (the live tick decided so too): none was ignored.
        decision = decide(state, anomalies, now, config.policy if line.heard else observed)
        # The live tick's own consequences (streak, recovery, escalation): replay cannot drift.
        state = settle(state, decision, anomalies, None, now, config, where=_REPLAY, explain=False).state
        tokens, cost, unpriced, budget = spend.tick(line, now)
        yield ReplayTick(
            tick=tick,
            at=now,
            line=number,
            first_action=first,
            actions=len(line.actions),
            progress=line.progress,
            anomalies=anomalies,
            decision=decision,
            tokens=tokens,
            cost=cost,
            unpriced=unpriced,
            budget=budget,
        )
        escalated = decision.action == "escalate"


def _masked_keys(
    keys: dict[str, Any], error: str | None, secrets: list[str]
) -> tuple[dict[str, Any], str | None]:
    """A journal action's summary and error with every secret masked (its digests show none)."""
    from ..base.redact import mask

    summary = keys.get("summary")
    if isinstance(summary, str):
        keys = {**keys, "summary": mask(summary, secrets)}
    return keys, None if error is None else mask(error, secrets)


class _Spend:
    """The spend of replayed heartbeats, and the first at which ``[budget]`` would have stopped the run."""

    def __init__(self, config: HeartbeatConfig) -> None:
        self.config = config.budget
        self.counters = BudgetCounters()
        self.stopped = False
        self._pricer: Pricer | None = None

    def tick(self, line: TraceLine, now: datetime) -> tuple[int, float, int, str | None]:
        """This heartbeat's tokens, dollars and calls with no price, and the budget's reason if it
        would stop the run here."""
        self.counters = roll_over(self.counters, now, self.config)
        tokens = unpriced = 0
        cost = sum(action.cost for action in line.actions)
        for call in line.usage:
            tokens += call.input_tokens + call.output_tokens
            price = call.cost
            if price is None:
                if self._pricer is None:
                    from ..core.prices import Pricer

                    self._pricer = Pricer(self.config.prices)
                price = self._pricer.price(
                    call.model, call.input_tokens, call.output_tokens, call.cached_tokens, at=now
                )
            cost += price or 0.0
            unpriced += call.calls if price is None else 0
        self.counters.actions += len(line.actions)
        self.counters.tokens += tokens
        self.counters.cost += cost
        if self.stopped:
            return tokens, cost, unpriced, None
        reason = overspent(self.counters, len(line.actions), self.config, tick_tokens=tokens, tick_cost=cost)
        self.stopped = reason is not None
        return tokens, cost, unpriced, reason


def _spent(tokens: int, cost: float, unpriced: int) -> str:
    """Tokens and dollars as the tick line says them: never a bare $0.0000 for calls with no price."""
    said = f"{tokens} tokens, ${cost:.4f}" if tokens else f"${cost:.4f}"
    return f"{said}, {unpriced} call(s) with no price" if unpriced else said


def _masked(action: TraceAction, secrets: list[str]) -> TraceAction:
    """``action`` with every secret in its tool, arguments, output and error replaced by ``***``."""
    from ..base.redact import mask, mask_tree

    return action.model_copy(
        update={
            "tool": mask(action.tool, secrets),
            "args": mask_tree(action.args, secrets),
            "output": None if action.output is None else mask(action.output, secrets),
            "error": None if action.error is None else mask(action.error, secrets),
        }
    )


def render_json(tick: ReplayTick) -> str:
    """One heartbeat as the stable one-line JSON of ``heartbeat replay --json``.

    ``spend`` (tokens and dollars) is added when the heartbeat spent any,
    ``budget`` (the reason) at the heartbeat where the budget would have
    stopped the run; the keys of the contract are always there.
    """
    line: dict[str, Any] = {
        "tick": tick.tick,
        "anomalies": [{"kind": a.kind, "action": a.action, "message": a.message} for a in tick.anomalies],
        "decision": tick.decision.action,
        "stuck_streak": tick.decision.stuck_streak,
    }
    if tick.tokens or tick.cost:
        line["spend"] = {"tokens": tick.tokens, "cost": round(tick.cost, 6)}
        if tick.unpriced:
            line["spend"]["unpriced"] = tick.unpriced
    if tick.budget is not None:
        line["budget"] = tick.budget
    return json.dumps(line)  # ASCII-only, so a cron job's C locale or any pipe can carry it


_HEADER = f"{'tick':>4}  {'actions':<9}  {'progress':<8}  {'decision':<16}  {'streak':>6}  anomalies"
_INDENT = " " * (len(_HEADER) - len("anomalies"))


def render_table(ticks: Iterable[ReplayTick]) -> Iterator[str]:
    """A readable table: one row per heartbeat, one line per anomaly, a summary line last."""
    yield _HEADER
    count = actions = tokens = unpriced = 0
    cost = 0.0
    last: ReplayTick | None = None
    for t in ticks:
        count, actions, last = count + 1, actions + t.actions, t
        tokens, cost, unpriced = tokens + t.tokens, cost + t.cost, unpriced + t.unpriced
        span = (
            "-"
            if not t.actions
            else str(t.first_action)
            if t.actions == 1
            else f"{t.first_action}-{t.first_action + t.actions - 1}"
        )
        progress = "-" if t.progress is None else f"{t.progress:g}"
        decision = t.decision.action if t.decision.action == "continue" else f"*{t.decision.action}"
        row = f"{t.tick:>4}  {span:<9}  {progress:<8}  {decision:<16}  {t.decision.stuck_streak:>6}  "
        notes = [
            f"! {a.kind}" + (f" @{a.action}" if a.action is not None else "") + f": {a.message}"
            for a in t.anomalies
        ]
        if t.tokens or t.cost:
            notes.append(f"$ {_spent(t.tokens, t.cost, t.unpriced)}")
        if t.budget is not None:
            notes.append(f"$ the budget would have stopped the run here: {t.budget}")
        yield (row + (notes[0] if notes else "-")).rstrip()
        for note in notes[1:]:
            yield _INDENT + note
    if last is None:
        yield "replayed an empty trace"
        return
    end = (
        f"escalated at heartbeat {last.tick}"
        if last.decision.action == "escalate"
        else f"last decision: {last.decision.action}"
    )
    spent = f", {_spent(tokens, cost, unpriced)}" if tokens or cost else ""
    done = f"replayed {count} heartbeat{'s' * (count != 1)}, {actions} action{'s' * (actions != 1)}"
    yield f"{done}{spent}; {end}"
