"""The step phase of a tick: call the agent's step under the KILL watchdog, measure, decide.

:func:`run_step` builds the step's context from the loaded state, calls the
step (any exception, ``SystemExit`` included, is the agent's error, recorded
as an errored action), lets the state take the step's work, measures
progress and asks the policy. If KILL (or the fleet stop, ``[stop]``) abandons
a step that does not return, the watchdog journals it and the tick's result is the KILL, with nothing of
the step saved but the calls it made: its actions are journaled and its model calls' spend counted
(:mod:`heartbeat.tick.late`), as it is abandoned and again should it come back after all; so too when
SIGTERM or SIGINT ends the tick through the step.
"""

from __future__ import annotations

import math
import threading
import traceback
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Any

from ..base.errors import HeartbeatError
from ..core.models import STEP_ERROR_TOOL, AgentState, Anomaly, Decision, clip, merged_spend
from ..core.policy import decide
from ..core.result import TickResult
from ..core.settle import TickFacts
from ..detect.monitor import Monitor
from ..state.killswitch import fleet_stop_name, stopped_by
from .context import StepContext
from .control import pause_requested, pending_note
from .late import Accounted, account_step
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

    __slots__ = ("accounted", "ctx", "lock", "result", "returned")

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.returned = False
        self.result: TickResult | None = None
        self.ctx: StepContext | None = None  # the step's, once made: its calls outlive an abandoned tick
        self.accounted: Accounted | None = None  # what of them the journal and state.json hold already


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
        by = fleet_stop_name(fleet.where)
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
            redact=hb.redact, mask=hb.mask, fleet=fleet.polled() if fleet is not None else None,
            observing=hb.config.policy.mode == "observe", pricer=hb.plugins.pricer,
            pausing=lambda: pause_requested(hb), by_person=pending_note(state) is not None,
        )  # fmt: skip
        state.ticks, state.last_tick_at = tick, now
        guard.ctx = ctx
        try:
            step(ctx)
        except TickInterrupted:  # SIGTERM/SIGINT of the tick itself: not the agent's error
            # The tick's work is dropped, but the calls the step made ran: journaled, spend counted.
            with guard.lock:
                account_step(hb, ctx, "interrupted", tick, guard.accounted)
            raise
        except BaseException as exc:  # SystemExit and KeyboardInterrupt of its own too
            # The agent's bug: recorded as an errored action, the tick goes on. sys.exit(0)
            # inside a step must not tell cron that all is well while budgets go unenforced.
            # Clipped like an action's error: a 5 MB message must not print or journal 5 MB a tick.
            step_error = clip(hb.redact(_head(f"{type(exc).__name__}: {_text(exc)}"))) or ""
            if not hb.agent.exec:  # a failed program is no tool call the agent could avoid
                ctx.record(STEP_ERROR_TOOL, None, error=step_error)
            trace = _traceback(exc, hb.redact)
            events.append({"event": "step_error", "error": step_error, "traceback": trace})
    finally:
        for token in tokens:
            unwatch(token)
    with guard.lock:
        guard.returned = True
        abandoned = guard.result
    if abandoned is not None:
        # The step came back after all (late): what it recorded since it was abandoned ran too.
        # Journaled, not saved (the tick's work is dropped); its spend counted (this tick still
        # holds the lock).
        abandoned.message += account_step(hb, ctx, "killed", tick, guard.accounted)[1]
        return abandoned
    state.data = ctx.data  # the step may have bound ctx.data to a new dict
    value, error = _progress(hb, ctx)
    monitor.add_progress(value, now=hb.clock(), error=error)
    state.history, state.progress = monitor.history, monitor.progress  # copies already
    state.actions_total = monitor.actions_total
    events += ctx.action_events()
    if ctx.usage or ctx.tick_cost:
        events += ctx.spend_events(state.spend_totals)
        state.spend_totals = merged_spend(state.spend_totals, ctx.usage)
    if error:
        events.append({"event": "metric_error", "error": error})
    anomalies = [a for a in monitor.tick_anomalies if a.kind != "budget"]
    decision = decide(state, anomalies, now, hb.config.policy)
    killed = hb.kill.reason()
    failed = [action.error for action in ctx.recorded if action.error]
    facts = TickFacts(
        tick,
        ctx.actions,
        value,
        error,
        step_error,
        killed,
        failed=len(failed),
        first_error=failed[0] if failed else None,
        tokens=ctx.tick_tokens,
        cost=ctx.tick_cost,
        turn=monitor.turn,
    )
    return Stepped(decision, anomalies, ctx.budget_anomaly, facts, events, monitor)


TRACEBACK_LIMIT = 8000
"""The characters of a step's traceback that are journaled: its start and, mostly, its end."""

_PART_LIMIT = 1000  # of one frame or one exception's message in the traceback
_REDACT_AHEAD = 64 * 1024  # text kept before redacting and clipping: a secret cut in half would not match


def _head(text: str) -> str:
    """The start of a text that may be huge, long enough that clipping it after redaction is exact."""
    return text if len(text) <= _REDACT_AHEAD else text[:_REDACT_AHEAD]


def _text(exc: BaseException) -> str:
    """``str(exc)``, or a note when its ``__str__`` itself raises."""
    try:
        return str(exc)
    except Exception:
        return f"<unprintable {type(exc).__name__}>"


def _traceback(exc: BaseException, redact: Callable[[str], str]) -> str:
    """The step's traceback (20 frames), redacted, its parts and the whole clipped (TRACEBACK_LIMIT)."""

    def part(text: str) -> str:
        text = redact(_head(text))
        return text if len(text) <= _PART_LIMIT else text[: _PART_LIMIT - 2] + "…\n"

    try:
        parts = traceback.TracebackException.from_exception(exc, limit=20).format()
        text = "".join(part(p) for p in parts)
    except Exception:  # a traceback that cannot be formatted is no reason to lose the tick
        text = part(f"{type(exc).__name__}: {_text(exc)}\n")
    if len(text) > TRACEBACK_LIMIT:  # the end says what failed; the start, where the step began
        keep = TRACEBACK_LIMIT // 4
        text = text[:keep] + "…\n" + text[-(TRACEBACK_LIMIT - keep) :]
    return text


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
        message = stopped_by(by or hb.kill.name, reason, " during the step")
        message += "; the step did not return and was abandoned (this tick's unsaved work is dropped)"
        result = TickResult(hb.name, "killed", 3, message, tick=tick)
        event = {"event": "kill", "reason": reason, "during_step": True, "abandoned": True}
        try:
            hb.journal([event], hb.clock(), tick)
        except (HeartbeatError, OSError) as exc:
            result.message += f" (not journaled: {hb.redact(str(exc))})"
        if guard.ctx is not None:  # the calls it made ran, whatever becomes of the process now
            guard.accounted, note = account_step(hb, guard.ctx, "killed", tick)
            result.message += note
        guard.result = result
    if hb.on_abandon is not None:
        hb.on_abandon(result)
