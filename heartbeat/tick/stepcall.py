"""The step phase of a tick: call the agent's step under the KILL watchdog, measure, decide.

:func:`run_step` builds the step's context from the loaded state, calls the
step (any exception, ``SystemExit`` included, is the agent's error, recorded
as an errored action), lets the state take the step's work, measures
progress and asks the policy. If KILL (or the fleet stop, ``[stop]``) abandons
a step that does not return, the watchdog journals it and the tick's result is the KILL, with nothing of
the step saved.
"""

from __future__ import annotations

import math
import threading
import traceback
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Any

from ..base.errors import HeartbeatError
from ..core.models import STEP_ERROR_TOOL, AgentState, Anomaly, Decision
from ..core.policy import decide
from ..core.result import TickResult
from ..core.settle import TickFacts
from ..detect.monitor import Monitor
from .context import StepContext
from .watchdog import TickInterrupted, unwatch, watch

if TYPE_CHECKING:
    from .agent import Agent

__all__ = ["StepGuard", "Stepped", "run_step"]


@dataclass
class Stepped:
    """What the step phase found, for settle: the decision and the facts around it."""

    decision: Decision
    anomalies: list[Anomaly]
    breach: Anomaly | None
    facts: TickFacts
    events: list[dict[str, Any]]
    monitor: Monitor


class StepGuard:
    """Who settles a step: the tick when it returns, or the watchdog when KILL abandons it."""

    __slots__ = ("lock", "result", "returned")

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.returned = False
        self.result: TickResult | None = None


def run_step(
    hb: Agent, state: AgentState, now: datetime, monitor: Monitor | None = None
) -> Stepped | TickResult:
    """Call the step, measure progress, run the policy; ``state`` takes the step's work.

    ``monitor``: the one the last tick of this process ended with, when it
    was kept (:mod:`heartbeat.state.warm`); it starts this tick as a Monitor seeded
    from ``state`` would.
    """
    tick = state.ticks + 1
    events: list[dict[str, Any]] = []
    guard = StepGuard()
    # Watched from before the agent's code is loaded: importing its module runs that code, which
    # can hang as surely as a step (a connection opened at import), and KILL must still stop it.
    tokens = [watch(hb.kill, lambda reason: _abandon(hb, guard, reason, tick))]
    fleet = hb.shared_stop
    if fleet is not None:  # the fleet stop too, read at most once a second (it may be a URL)
        by = f"the fleet stop {fleet.where}"
        tokens.append(watch(fleet.polled(), lambda reason: _abandon(hb, guard, reason, tick, by)))
    step_error = None
    try:
        step = hb.step()
        hb.metric()  # a misspelt metric fails the tick here, before the step's side effects
        if monitor is None:
            monitor = Monitor(
                hb.config.detectors,
                detectors=hb.detectors,
                history=state.history,
                progress=state.progress,
                actions_total=state.actions_total,
                tick=tick,
            )
            monitor.start_tick(tick)
        else:  # the last tick's, readied for this one (heartbeat.state.warm) unless it says otherwise
            monitor.start_tick(tick, reseed=monitor.tick != tick)
        ctx = StepContext(
            agent=hb.name, tick=tick, now=now, data=state.data, instructions=state.instructions,
            state_dir=hb.state_dir, base_dir=hb.config.base_dir, monitor=monitor,
            budget=hb.config.budget, counters=state.budget, kill=hb.kill, clock=hb.clock,
            redact=hb.redact, mask=hb.mask,
        )  # fmt: skip
        state.ticks, state.last_tick_at = tick, now
        try:
            step(ctx)
        except TickInterrupted:
            raise  # SIGTERM/SIGINT of the tick itself: not the agent's error
        except BaseException as exc:  # SystemExit and KeyboardInterrupt of its own too
            # The agent's bug: recorded as an errored action, the tick goes on. sys.exit(0)
            # inside a step must not tell cron that all is well while budgets go unenforced.
            step_error = hb.redact(f"{type(exc).__name__}: {exc}")
            if not hb.agent.exec:  # a failed program is no tool call the agent could avoid
                ctx.record(STEP_ERROR_TOOL, None, error=step_error)
            trace = hb.redact(traceback.format_exc(limit=20))
            events.append({"event": "step_error", "error": step_error, "traceback": trace})
    finally:
        for token in tokens:
            unwatch(token)
    with guard.lock:
        guard.returned = True
        if guard.result is not None:
            return guard.result
    state.data = ctx.data  # the step may have bound ctx.data to a new dict
    value, error = _progress(hb, ctx)
    monitor.add_progress(value, now=hb.clock(), error=error)
    state.history, state.progress = monitor.history, monitor.progress  # copies already
    state.actions_total = monitor.actions_total
    events += ctx.action_events(state.history, hb.config.detectors.volatile_args)
    if error:
        events.append({"event": "metric_error", "error": error})
    anomalies = [a for a in monitor.tick_anomalies if a.kind != "budget"]
    decision = decide(state, anomalies, now, hb.config.policy)
    killed = hb.kill.reason()
    failed = [entry[4] for entry in ctx.recorded if entry[4]]
    facts = TickFacts(
        tick,
        ctx.actions,
        value,
        error,
        step_error,
        killed,
        failed=len(failed),
        first_error=failed[0] if failed else None,
    )
    return Stepped(decision, anomalies, ctx.budget_anomaly, facts, events, monitor)


def _progress(hb: Agent, ctx: StepContext) -> tuple[float | None, str | None]:
    """This tick's progress sample: the metric's, else what the step reported; never raises."""
    metric = hb.metric()
    if metric is not None:
        from ..detect.progress import measure

        timeout = hb.config.progress.timeout.total_seconds() if hb.config.progress else 60.0
        value, error = measure(metric, ctx, timeout=timeout, stop=hb.kill.reason)
        return value, hb.redact(error) if error else None
    value = ctx.reported_progress
    if value is not None and not math.isfinite(value):
        return None, f"the step reported progress {value!r}, not a finite number"
    return value, None


def _abandon(hb: Agent, guard: StepGuard, reason: str, tick: int, by: str | None = None) -> None:
    """KILL (or the fleet stop ``by``) while the step did not return (watchdog thread): journal it,
    drop the tick's work."""
    with guard.lock:
        if guard.returned or guard.result is not None:  # returned, or the other stop was first
            return
        message = (
            f"stopped by {by or hb.kill.path} during the step: {reason}; the step did not return "
            "and was abandoned (this tick's unsaved work is dropped)"
        )
        result = TickResult(hb.name, "killed", 3, message, tick=tick)
        event = {"event": "kill", "reason": reason, "during_step": True, "abandoned": True}
        try:
            hb.journal([event], hb.clock(), tick)
        except (HeartbeatError, OSError) as exc:
            result.message += f" (not journaled: {hb.redact(str(exc))})"
        guard.result = result
    if hb.on_abandon is not None:
        hb.on_abandon(result)
