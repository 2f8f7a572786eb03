"""The step phase of a tick: call the agent's step under the KILL watchdog, measure, decide.

:func:`run_step` builds the step's context from the loaded state, calls the step (any exception,
``SystemExit`` included, is the agent's error, recorded as an errored action), lets the state take
the step's work, measures progress and asks the policy. Once SIGTERM or SIGINT ends the process that
runs the tick (:attr:`Agent.signalled`: ``run``, a Session), no step is begun and no progress
measured or waited for; the tick is saved with what ran, its sample saying why it has no value. If
KILL (or the fleet stop, ``[stop]``) abandons a step that does not return, the watchdog journals it
and the tick's result is the KILL, with nothing of the step saved but the calls it made: its actions
are journaled and its model calls' spend counted (:mod:`heartbeat.tick.late`), as it is abandoned
and again should it come back after all; so too when SIGTERM or SIGINT ends the tick before its save
(:func:`interrupted_calls`), and when the step does not unwind and the process ends without it
(:func:`account_interrupted`). Each call once (:mod:`heartbeat.tick.stepguard`).
"""

from __future__ import annotations

import math
import traceback
from collections.abc import Callable, Iterator
from contextlib import contextmanager, nullcontext
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Any

from ..base.errors import EXIT_CODES, HeartbeatError
from ..core.models import STEP_ERROR_TOOL, AgentState, Anomaly, Decision, clip, merged_spend
from ..core.policy import decide, unheard
from ..core.result import TickResult
from ..core.settle import TickFacts
from ..detect.monitor import Monitor
from ..state.killswitch import fleet_stop_name, stopped_by
from ..state.store import EXEC_SCRATCH_PREFIX
from .context import StepContext
from .control import pause_requested, pending_note, watch_stops
from .late import account_step
from .orphans import marking_children
from .stepguard import StepGuard
from .watchdog import TickInterrupted, unwatch

if TYPE_CHECKING:
    from ..detect.progress import ProgressMetric
    from .agent import Agent

__all__ = ["Stepped", "account_interrupted", "interrupted_calls", "run_step"]

# How long a process ending on a signal waits for the step's guard (the tick's own thread holds it
# only to account for the calls itself): past this it leaves them to that thread.
_GUARD_WAIT = 0.5


@dataclass
class Stepped:
    """What the step phase found, for settle: the decision and the facts around it."""

    decision: Decision
    anomalies: list[Anomaly]
    breach: Anomaly | None
    facts: TickFacts
    events: list[dict[str, Any]]
    monitor: Monitor


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
    guard = hb.stepping = StepGuard(tick)  # until the tick's save keeps its calls
    # Watched from before the agent's code is loaded: importing its module runs that code, which
    # can hang as surely as a step (a connection opened at import), and KILL must still stop it.
    tokens = watch_stops(hb, lambda reason, by: _abandon(hb, guard, reason, tick, by))
    fleet = hb.shared_stop
    step_error = None
    try:
        step = hb.step()
        hb.metric()  # a misspelt metric fails the tick here, before the step's side effects
        hb.plugins.find_notifiers()  # and so does a notifier plug-in that is not there
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
        measured, baseline = _baseline(hb, ctx, monitor)
        early = measured and _stopping(hb, guard)  # KILL or the fleet stop while it was measured
        signalled = _signalled(hb)  # SIGTERM/SIGINT ends `run` or a Session: the step is not begun
        if signalled is not None:
            said = f"{signalled} before the step began; it was not called"
            events.append({"event": "interrupted", "reason": said, "before_step": True})
        if measured and not early and (asked := pause_requested(hb)) is not None:  # a person's pause
            message = f"paused before the step began: {asked}; the step was not called"
            return TickResult(hb.name, "paused", EXIT_CODES["paused"], hb.redact(message), tick=tick)
        state.ticks, state.last_tick_at = tick, now
        guard.ctx = ctx
        try:
            # A Python step's processes are marked for the sweep a SIGKILLed tick needs (orphans).
            with marking_children(hb.state_dir, EXEC_SCRATCH_PREFIX) if not hb.agent.exec else nullcontext():
                if not early and signalled is None:  # a stop while the baseline was measured: never begun
                    step(ctx)
        except TickInterrupted:  # SIGTERM/SIGINT of the tick itself, not the agent's error:
            raise  # its calls are accounted for as it unwinds (interrupted_calls)
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
        # holds the lock). Nothing else accounts for them once it returned.
        guard.accounted, note = account_step(hb, ctx, guard.why, tick, guard.accounted)
        abandoned.message += note
        return abandoned
    state.data = ctx.data  # the step may have bound ctx.data to a new dict
    value, error = _progress(hb, ctx)
    monitor.add_progress(value, now=hb.clock(), error=error, baseline=baseline)
    state.history, state.progress = monitor.history, monitor.progress  # copies already
    state.actions_total = monitor.actions_total
    events += ctx.action_events()
    if ctx.usage or ctx.tick_cost:
        events += ctx.spend_events(state.spend_totals)
        state.spend_totals = merged_spend(state.spend_totals, ctx.usage)
    if error:
        events.append({"event": "metric_error", "error": error})
    anomalies = [a for a in monitor.tick_anomalies if a.kind != "budget"]
    decision = decide(state, anomalies, now, hb.config.policy if ctx.heard else unheard(hb.config.policy))
    # What ctx.killed told the step: the KILL file, else the fleet stop's latest reading. A step
    # that returned on the fleet stop was stopped, not done; it is said so, as KILL is.
    killed, by = hb.kill.reason(), hb.kill.name
    if killed is None and fleet is not None and (killed := fleet.latest()) is not None:
        by = fleet_stop_name(fleet.where)
    stopped = None if killed is None else stopped_by(by, killed, " during the step")
    failed = [action.error for action in ctx.recorded if action.error]
    facts = TickFacts(
        tick,
        ctx.actions,
        value,
        error,
        step_error,
        killed,
        stopped,
        switch=by if killed is not None else None,
        failed=len(failed),
        first_error=failed[0] if failed else None,
        tokens=ctx.tick_tokens,
        cost=ctx.tick_cost,
        unpriced=sum(spend.unpriced for spend in ctx.usage.values()),
        turn=monitor.turn is True,
        heard=ctx.heard,
        baseline=state.progress[-1].baseline,
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
        value, error = _measure(hb, metric, ctx)
        return value, hb.redact(error) if error else None
    value = ctx.reported_progress
    if value is not None and not math.isfinite(value):
        return None, f"the step reported progress {value!r}, not a finite number"
    return value, None


def _baseline(hb: Agent, ctx: StepContext, monitor: Monitor) -> tuple[bool, float | None]:
    """Whether the metric was measured before the step, and its value: when no measured sample is
    kept for its first rise to rise from (see :attr:`ProgressSample.baseline`). None when it
    fails then (no baseline; the sample after the step says why)."""
    metric = hb.metric()
    if metric is None or any(sample.value is not None for sample in monitor.progress):
        return False, None
    return True, _measure(hb, metric, ctx)[0]


def _stopping(hb: Agent, guard: StepGuard) -> bool:
    """Whether KILL or the fleet stop came before the step was begun (the watchdog abandoned the
    tick, or it is about to): the step is not called, and the tick ends as a stop during it."""
    return guard.result is not None or _stop_reason(hb) is not None


def _stop_reason(hb: Agent) -> str | None:
    """The reason of KILL, else of the fleet stop's latest reading; None while neither stands."""
    fleet = hb.shared_stop
    return hb.kill.reason() or (fleet.latest() if fleet is not None else None)


def _signalled(hb: Agent) -> str | None:
    """Why SIGTERM or SIGINT is ending the process running this tick (:attr:`Agent.signalled`), else None."""
    signalled = hb.signalled
    return None if signalled is None else signalled()


def _measure(hb: Agent, metric: ProgressMetric, ctx: StepContext) -> tuple[float | None, str | None]:
    """The metric measured now, within the ``[progress]`` timeout; KILL, the fleet stop, a person's
    pause and a signal ending the process stop waiting for it (a slow metric held a pause and the
    fleet stop off, and a signal's exit for as long as it took). Once a signal came, it is not
    measured at all: the sample says why, and is no value (the last one is not this tick's)."""
    from ..detect.progress import measure, metric_name

    signalled = _signalled(hb)
    if signalled is not None:
        return None, f"progress metric {metric_name(metric)} was not measured: {signalled}"
    timeout = hb.config.progress.timeout.total_seconds() if hb.config.progress else 60.0
    return measure(
        metric, ctx, timeout=timeout, stop=lambda: _stop_reason(hb) or pause_requested(hb) or _signalled(hb)
    )


def _abandon(hb: Agent, guard: StepGuard, reason: str, tick: int, by: str | None = None) -> None:
    """KILL (or the fleet stop ``by``) while the step did not return (watchdog thread): journal it,
    drop the tick's work."""
    with guard.lock:
        if guard.returned or guard.result is not None:  # returned, or the other stop was first
            return
        message = stopped_by(by or hb.kill.name, reason, " during the step")
        message += "; the step did not return and was abandoned (this tick's unsaved work is dropped)"
        result = TickResult(hb.name, "killed", 3, message, tick=tick)
        event = {"event": "kill", "reason": reason, "by": by or hb.kill.name, "during_step": True}
        event["abandoned"] = True
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


@contextmanager
def interrupted_calls(hb: Agent) -> Iterator[None]:
    """Around a tick from its step to its save (the state folder's lock held): SIGTERM or SIGINT
    unwinding it drops the tick's work, but the calls its step made ran. They are journaled and
    their spend counted (``after_stop: interrupted``), those no stop accounted for already."""
    try:
        yield
    except TickInterrupted:
        guard = hb.stepping
        if guard is not None and guard.ctx is not None:
            with guard.lock:
                guard.accounted, _ = account_step(hb, guard.ctx, "interrupted", guard.tick, guard.accounted)
        raise
    finally:
        hb.stepping = None


def account_interrupted(hb: Agent, reason: str) -> str:
    """A signal ends the process while ``hb``'s step still runs (it did not unwind, or ``run`` was
    aborted; called from another thread). The calls it made ran: journaled and their spend counted,
    once, and the step is taken (should it return after all, its tick saves nothing). A note of
    what could not be accounted for, else ""."""
    guard = hb.stepping
    if guard is None or guard.ctx is None or not guard.lock.acquire(timeout=_GUARD_WAIT):
        return ""  # no step ran, or the tick's own thread holds the guard to account for them
    try:
        if guard.returned:  # the tick has its calls: it saves them, or accounts for them as it unwinds
            return ""
        if guard.result is None:  # else KILL abandoned it already: what it did since, as its calls
            message = f"{reason}; the step did not unwind (this tick's unsaved work is dropped)"
            guard.result = TickResult(hb.name, "error", 1, message, tick=guard.tick)
            guard.why = "interrupted"
        guard.accounted, note = account_step(hb, guard.ctx, guard.why, guard.tick, guard.accounted)
        return note
    finally:
        guard.lock.release()
