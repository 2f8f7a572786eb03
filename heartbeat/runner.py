"""One heartbeat: the fixed pipeline of DESIGN.md's "One tick", over one agent.

The runner is the only place that reads the clock (an injected ``clock``),
touches files and sends notifications; detectors and the policy it calls are
pure. Every tick returns a :class:`TickResult` that the CLI prints and the
journal records.
"""

from __future__ import annotations

import contextlib
import math
import os
import threading
import traceback
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from .budget import exhausted, roll_over
from .config import AgentConfig, HeartbeatConfig
from .context import Step, StepContext
from .detectors import build_detectors
from .errors import (
    ConfigError,
    HeartbeatError,
    StateCorrupt,
    StateLocked,
    StateUnsavable,
    StateWriteError,
    worst_exit_code,
)
from .journal import Journal
from .killswitch import KillSwitch
from .models import (
    ANOMALY_LIMIT,
    AgentState,
    Anomaly,
    Decision,
    Escalation,
    Notification,
    Status,
    append_bounded,
)
from .monitor import Monitor
from .plugins import load_object
from .policy import decide
from .store import StateStore
from .watchdog import TickInterrupted, unwatch, watch

# notify, progress and escalation are imported where used: most ticks of a healthy
# agent with no metric configured never need them, and a cron tick pays for every import.
if TYPE_CHECKING:
    from .notify import DeliveryReport, Notifier, Outbox
    from .progress import ProgressMetric

__all__ = ["Heartbeat", "TickResult", "utc_now"]

Outcome = Literal["ran", "killed", "locked", "paused", "needs_human", "error"]


def utc_now() -> datetime:
    """The real clock: timezone-aware UTC."""
    return datetime.now(UTC)


@dataclass
class TickResult:
    """What one heartbeat did; the CLI prints it and the journal records it."""

    agent: str
    outcome: Outcome
    exit_code: int
    message: str
    tick: int | None = None
    actions: int = 0
    progress: float | None = None
    progress_error: str | None = None
    anomalies: list[Anomaly] = field(default_factory=list)
    decision: Decision | None = None
    step_error: str | None = None
    delivered: list[str] = field(default_factory=list)
    undelivered: list[str] = field(default_factory=list)
    waiting: int = 0

    def to_json(self) -> dict[str, Any]:
        """A JSON-able dict, stable for scripts (``heartbeat tick --json``)."""
        return {
            "agent": self.agent,
            "outcome": self.outcome,
            "exit_code": self.exit_code,
            "message": self.message,
            "tick": self.tick,
            "actions": self.actions,
            "progress": self.progress,
            "progress_error": self.progress_error,
            "anomalies": [a.model_dump(mode="json") for a in self.anomalies],
            "decision": self.decision.model_dump(mode="json") if self.decision else None,
            "step_error": self.step_error,
            "notifications": {
                "delivered": self.delivered,
                "undelivered": self.undelivered,
                "waiting": self.waiting,
            },
        }

    def _absorb(self, report: DeliveryReport) -> None:
        self.delivered += report.delivered
        self.undelivered += [f"{name}: {error}" for name, error in report.failed]
        self.undelivered += [
            f"outbox entry {name} was unreadable; set aside, not sent" for name in report.corrupt
        ]
        self.waiting = report.waiting


def config_secrets(config: HeartbeatConfig) -> list[str]:
    """Every secret the config holds: webhook URLs and headers, ``${ENV}`` values of notifiers."""
    return config.secrets()


class Heartbeat:
    """One agent's heartbeat: ``tick()`` runs the pipeline once."""

    def __init__(
        self,
        config: HeartbeatConfig,
        agent: AgentConfig | None = None,
        *,
        step: Step | None = None,
        progress: ProgressMetric | None = None,
        notifiers: Sequence[Notifier] | None = None,
        clock: Callable[[], datetime] = utc_now,
    ) -> None:
        self.config = config
        self.agent = agent or config.all_agents()[0]
        self.name = self.agent.name
        self.clock = clock
        self.state_dir = config.resolve(self.agent.state_dir)
        self._secrets = config_secrets(config)
        self.store = StateStore(self.state_dir, secrets=self._secrets)
        self.kill = KillSwitch(config.resolve(self.agent.kill_file))
        self._step = step
        self._metric = progress
        self._metric_loaded = progress is not None
        self._notifiers = list(notifiers) if notifiers is not None else None
        self._detectors = build_detectors(config.detectors, search_path=config.base_dir)
        self._journal_file: Journal | None = None
        self.on_abandon: Callable[[TickResult], None] | None = None
        """Called (from the watchdog thread) when a step that did not return is abandoned on KILL."""

    # -- plug-ins, loaded once and only from the config or flags, never from state.json

    def step(self) -> Step:
        """The agent's step (loaded from the config on first use)."""
        if self._step is None:
            if self.agent.exec:
                from .execstep import ExecStep

                self._step = ExecStep(self.agent.exec, timeout=self.agent.exec_timeout.total_seconds())
            elif self.agent.step:
                found = load_object(self.agent.step, what="step", search_path=self.config.base_dir)
                if not callable(found):
                    raise ConfigError(f"step {self.agent.step!r} is not callable")
                self._step = found
            else:
                raise ConfigError(
                    "no step configured: set [agent] step = 'module:attr' or exec, or pass --step/--exec"
                )
        return self._step

    def metric(self) -> ProgressMetric | None:
        """The progress metric, or None when none is configured."""
        if not self._metric_loaded:
            if self.agent.progress or self.config.progress:
                from .progress import build_metric

                self._metric = build_metric(self.config, self.agent)
            self._metric_loaded = True
        return self._metric

    def notifiers(self) -> list[Notifier]:
        """The configured notifiers (built on first use, so httpx loads only when needed)."""
        if self._notifiers is None:
            from .notify import build_notifiers

            self._notifiers = build_notifiers(self.config.notify, base_dir=self.config.base_dir)
        return self._notifiers

    def validate(self) -> None:
        """Load every plug-in now, so a bad config fails before the first tick."""
        self.step()
        self.metric()
        self.notifiers()

    # -- the tick

    def tick(self) -> TickResult:
        """Run one heartbeat and return what happened; never raises a HeartbeatError or OSError."""
        try:
            return self._tick()
        except TickInterrupted as exc:
            # SIGTERM/SIGINT of `heartbeat tick`: the step is gone (an --exec group ended), its
            # work unsaved. Journal it when the lock can be had, then let the caller exit.
            with contextlib.suppress(HeartbeatError, OSError), self.store.lock():
                self._journal([{"event": "interrupted", "reason": str(exc)}], self.clock(), 0)
            raise
        except StateLocked as exc:
            return TickResult(self.name, "locked", 5, self.redact(str(exc)))
        except HeartbeatError as exc:
            return TickResult(self.name, "error", exc.exit_code, self.redact(str(exc)))
        except OSError as exc:  # a full disk or a broken state folder: one clear line, exit 2
            where = exc.filename or self.state_dir
            error = StateWriteError(
                where if isinstance(where, Path) else Path(str(where)), exc.strerror or str(exc)
            )
            return TickResult(self.name, "error", 2, self.redact(str(error)))

    def _tick(self) -> TickResult:
        reason = self.kill.reason()
        if reason is not None:
            return self._killed(reason, locked=False)
        self.config.require_env()  # a tick may have to notify: its secrets must be there
        with self.store.lock():
            now = self.clock()
            state = self.store.load()
            events: list[dict[str, Any]] = []
            result = TickResult(self.name, "ran", 0, "")
            # Notices left by a crash between saving a decision and queueing its message are
            # queued by _finish, like this tick's own.
            result._absorb(self.retry_outbox(now, force=False))
            if state.status is Status.NEEDS_HUMAN:
                self._remind(state, now, events)
                result.outcome, result.exit_code = "needs_human", 4
                result.message = (
                    f"waiting for a human since {_when(state)}; see "
                    f"{self.store.escalation_path}, then `{self._resume_hint()}`"
                )
                self._finish(state, events, result, now, save=bool(state.notices))
                return result
            if state.status is Status.PAUSED:
                result.outcome = "paused"
                result.message = f"paused: {state.status_reason or 'by hand'}; `heartbeat resume` goes on"
                self._finish(state, events, result, now, save=False)
                return result
            state.budget = roll_over(state.budget, now, self.config.budget)
            spent = exhausted(state, self.config.budget)
            if spent is not None:
                self._pause_for_budget(state, spent, now, result, events)
                self._finish(state, events, result, now)
                return result
            reason = self.kill.reason()
            if reason is not None:
                return self._killed(reason, locked=True)
            # A folder that cannot take the state must not let the agent act with nothing saved.
            self.store.check_writable()
            abandoned = self._run_step(state, now, result, events)
            if abandoned is not None:
                return abandoned
            self._finish(state, events, result, now)
            return result

    def _run_step(
        self, state: AgentState, now: datetime, result: TickResult, events: list[dict[str, Any]]
    ) -> TickResult | None:
        """Call the step and settle the tick; the KILL result instead when the step was abandoned."""
        step = self.step()
        tick = state.ticks + 1
        monitor = Monitor(
            self.config.detectors,
            detectors=self._detectors,
            history=state.history,
            progress=state.progress,
            actions_total=state.actions_total,
            tick=tick,
        )
        monitor.start_tick(tick)
        ctx = StepContext(
            agent=self.name,
            tick=tick,
            now=now,
            data=state.data,
            instructions=state.instructions,
            state_dir=self.state_dir,
            base_dir=self.config.base_dir,
            monitor=monitor,
            budget=self.config.budget,
            counters=state.budget,
            kill=self.kill,
            clock=self.clock,
            redact=self.redact,
            mask=self.mask,
        )
        state.ticks, state.last_tick_at = tick, now
        result.tick = tick
        guard = _StepGuard()
        token = watch(self.kill, lambda reason: self._abandon(guard, reason, tick))
        try:
            step(ctx)
        except TickInterrupted:
            raise  # SIGTERM/SIGINT of the tick itself: not the agent's error
        except BaseException as exc:  # SystemExit, KeyboardInterrupt of its own too
            # The agent's bug: recorded as an errored action, the tick goes on. sys.exit(0)
            # inside a step must not tell cron that all is well while budgets go unenforced.
            result.step_error, result.exit_code = self.redact(f"{type(exc).__name__}: {exc}"), 1
            ctx.record("step", None, error=result.step_error)
            events.append(
                {
                    "event": "step_error",
                    "error": result.step_error,
                    "traceback": self.redact(traceback.format_exc(limit=20)),
                }
            )
        finally:
            unwatch(token)
        with guard.lock:
            guard.returned = True
            if guard.result is not None:
                return guard.result  # abandoned on KILL: this tick's unsaved work is dropped
        state.data = ctx.data  # the step may have bound ctx.data to a new dict
        result.actions = ctx.actions
        value, error = self._progress(ctx)
        monitor.add_progress(value, now=self.clock(), error=error)
        result.progress, result.progress_error = value, error
        state.history, state.progress = list(monitor.history), list(monitor.progress)
        state.actions_total = monitor.actions_total
        events += _action_events(ctx, state, self.config.detectors.volatile_args)
        if error:
            events.append({"event": "metric_error", "error": error})

        anomalies = [a for a in monitor.tick_anomalies if a.kind != "budget"]
        decision = decide(state, anomalies, now, self.config.policy)
        result.anomalies, result.decision = list(anomalies), decision
        for anomaly in anomalies:
            append_bounded(state.anomalies, anomaly, ANOMALY_LIMIT)
            events.append({"event": "anomaly", **anomaly.model_dump(mode="json")})
        recovering = state.recovery is not None
        self._apply(state, decision, anomalies, now, result, events)
        if ctx.budget_anomaly is not None and state.status is Status.ACTIVE:
            result.anomalies.append(ctx.budget_anomaly)
            self._pause_for_budget(state, ctx.budget_anomaly.message, now, result, events)
        after_kill = self.kill.reason()
        if after_kill is not None:
            # A KILL that appeared mid-step: the step finished, its work is saved, nothing more runs.
            events.append({"event": "kill", "reason": after_kill, "during_step": True})
            result.outcome, result.exit_code = "killed", 3
            result.message = f"stopped by {self.kill.path} during the step: {after_kill}"
        elif not result.message:
            result.message = _describe(result)
            if recovering and decision.action == "continue" and decision.recovery is None:
                result.message += "; recovered: no anomaly, instructions cleared"
            elif recovering and decision.action == "continue":
                # One quiet heartbeat inside a stuck stretch: the recovery holds (policy).
                result.message += f"; quiet: {decision.reason}"
        return None

    def _abandon(self, guard: _StepGuard, reason: str, tick: int) -> None:
        """KILL while the step did not return (watchdog thread): journal it, drop the tick's work."""
        with guard.lock:
            if guard.returned:
                return
            message = (
                f"stopped by {self.kill.path} during the step: {reason}; the step did not return "
                "and was abandoned (this tick's unsaved work is dropped)"
            )
            result = TickResult(self.name, "killed", 3, message, tick=tick)
            event = {"event": "kill", "reason": reason, "during_step": True, "abandoned": True}
            try:
                self._journal([event], self.clock(), tick)
            except (HeartbeatError, OSError) as exc:
                result.message += f" (not journaled: {self.redact(str(exc))})"
            guard.result = result
        if self.on_abandon is not None:
            self.on_abandon(result)

    def _progress(self, ctx: StepContext) -> tuple[float | None, str | None]:
        """This tick's progress sample: the metric's, else what the step reported; never raises."""
        metric = self.metric()
        if metric is not None:
            from .progress import measure

            value, error = measure(metric, ctx, timeout=_metric_timeout(self.config))
            return value, self.redact(error) if error else None
        value = ctx.reported_progress
        if value is not None and not math.isfinite(value):
            return None, f"the step reported progress {value!r}, not a finite number"
        return value, None

    def _apply(
        self,
        state: AgentState,
        decision: Decision,
        anomalies: Sequence[Anomaly],
        now: datetime,
        result: TickResult,
        events: list[dict[str, Any]],
    ) -> None:
        """Carry out the policy's decision on the state."""
        state.stuck_streak = decision.stuck_streak
        state.recovery = decision.recovery
        state.instructions = decision.instructions
        events.append(
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
        key = f"{self.name}-escalation-{state.ticks}"
        state.escalation = Escalation(
            at=now,
            tick=state.ticks,
            reason=state.status_reason,
            key=key,
            kinds=sorted({a.kind for a in anomalies}),
        )
        hint = self._resume_hint()
        self._notice(
            state,
            events,
            key=key,
            kind="escalation",
            reason=state.status_reason,
            now=now,
            text=notification_text(
                self.name,
                f"needs a human: {state.status_reason}",
                anomalies,
                f"Resume: {hint}\nReport: {self.state_dir / 'report.html'}",
            ),
            payload=payload(state, anomalies),
        )
        events.append({"event": "escalation", "key": key, "reason": state.status_reason})
        result.outcome, result.exit_code = "needs_human", 4
        result.message = (
            f"escalated to a human: {state.status_reason}\n"
            f"  what happened: {self.store.escalation_path}; as a page: {self.state_dir / 'report.html'}\n"
            f"  to go on: `{hint}`; to stop for good: touch {self.kill.path}"
        )

    def _pause_for_budget(
        self,
        state: AgentState,
        reason: str,
        now: datetime,
        result: TickResult,
        events: list[dict[str, Any]],
    ) -> None:
        from .escalation import notification_text, payload

        state.status, state.status_reason = Status.PAUSED, reason
        events.append({"event": "budget", "reason": reason})
        self._notice(
            state,
            events,
            key=f"{self.name}-budget-{state.ticks}-{now.date().isoformat()}",
            kind="budget",
            reason=reason,
            now=now,
            text=notification_text(self.name, f"paused: {reason}", [], f"Resume: {self._resume_hint()}"),
            payload=payload(state, []),
        )
        result.outcome = "paused"
        result.message = f"paused: {reason}"

    def _remind(self, state: AgentState, now: datetime, events: list[dict[str, Any]]) -> None:
        """Remind people of an open escalation, at most once per ``reminder_every``."""
        escalation = state.escalation
        if escalation is None or state.notices:
            return  # the first message has not even gone out: a reminder would only pile up
        last = escalation.last_reminder_at or escalation.at
        if now - last < self.config.escalation.reminder_every:
            return
        if self.outbox_waiting() and self.outbox().waiting_for([n.name for n in self.config.notify]):
            return  # still waiting to reach someone; corrupt or orphaned entries do not count
        from .escalation import notification_text, payload

        escalation.last_reminder_at = now
        waited = now - escalation.at
        self._notice(
            state,
            events,
            key=f"{escalation.key}-reminder-{int(waited.total_seconds())}",
            kind="reminder",
            reason=escalation.reason,
            now=now,
            text=notification_text(
                self.name,
                f"still needs a human ({_ago(waited)}): {escalation.reason}",
                [],
                f"Resume: {self._resume_hint()}",
            ),
            payload=payload(state, state.anomalies[-5:]),
        )

    def _notice(self, state: AgentState, events: list[dict[str, Any]], **fields: Any) -> None:
        """Decide a notification: it rides in the state until the state is saved, then goes to outbox/."""
        note = Notification(agent=self.name, created_at=fields.pop("now"), **fields)
        state.notices.append(note)
        events.append(
            {
                "event": "notify",
                "kind": note.kind,
                "key": note.key,
                "notifiers": [n.name for n in self.config.notify],
            }
        )

    def _flush_notices(self, state: AgentState, events: list[dict[str, Any]]) -> None:
        """Queue the saved state's notices in outbox/ (and write ESCALATION.md), then forget them."""
        outbox = self.outbox()
        for note in state.notices:
            if note.kind == "escalation" and state.status is Status.NEEDS_HUMAN:
                self._write_escalation_file(state, note)
                self._write_report(state, note, events)
            for notifier in self.notifiers():
                outbox.put(note, notifier.name, None)
        state.notices = []

    def _write_escalation_file(self, state: AgentState, note: Notification) -> None:
        from .escalation import escalation_markdown
        from .fsutil import atomic_write

        tick = state.escalation.tick if state.escalation else state.ticks
        evidence = [a for a in state.anomalies if a.tick == tick]
        text = escalation_markdown(
            self.name,
            state,
            evidence,
            reason=note.reason,
            now=note.created_at,
            resume_hint=self._resume_hint(),
        )
        atomic_write(self.store.escalation_path, self.redact(text).encode("utf-8"))

    def _write_report(self, state: AgentState, note: Notification, events: list[dict[str, Any]]) -> None:
        """report.html beside ESCALATION.md; a page that cannot be made costs the page, never the tick."""
        from .report import write_report

        stamp = {"at": note.created_at.isoformat(), "agent": self.name, "tick": state.ticks}
        try:
            write_report(self, now=note.created_at, pending=[{**stamp, **e} for e in events], locked=True)
        except (HeartbeatError, OSError, ValueError) as exc:
            events.append({"event": "report_error", "error": self.redact(str(exc))})

    def outbox(self) -> Outbox:
        """The agent's outbox of undelivered notifications."""
        from .notify import Outbox

        return Outbox(self.store.outbox_dir, secrets=self._secrets)

    def outbox_waiting(self) -> bool:
        """Whether anything waits in outbox/ (one scandir; no outbox folder is an empty one)."""
        try:
            with os.scandir(self.store.outbox_dir) as entries:
                # Entries only: a corrupt file set aside or a temp file is nothing to send.
                return any(e.name.endswith(".json") and e.name[0] != "." for e in entries)
        except OSError:
            return False

    def retry_outbox(self, now: datetime, *, force: bool) -> DeliveryReport:
        """Try to deliver what waits in the outbox (only entries that are due unless forced)."""
        if not self.outbox_waiting():
            from .notify import DeliveryReport

            return DeliveryReport()
        return self.outbox().deliver(self.notifiers(), now, force=force)

    def _finish(
        self,
        state: AgentState,
        events: list[dict[str, Any]],
        result: TickResult,
        now: datetime,
        *,
        save: bool = True,
    ) -> None:
        """Save atomically; then queue and deliver what the saved tick decided; then journal."""
        if save:
            self._save(state, events, result)
        if state.notices:
            # Only a decision that is on disk is announced: a failed save above raised already.
            self._flush_notices(state, events)
            self.store.save(state)
            result._absorb(self.retry_outbox(now, force=False))
        if result.delivered or result.undelivered:
            events.append(
                {
                    "event": "delivery",
                    "delivered": result.delivered,
                    "undelivered": result.undelivered,
                    "waiting": result.waiting,
                }
            )
        events.append(
            {
                "event": "tick",
                "outcome": result.outcome,
                "exit_code": result.exit_code,
                "actions": result.actions,
                "progress": result.progress,
                "message": result.message,
            }
        )
        try:
            self._journal(events, now, result.tick if result.tick is not None else state.ticks)
        except OSError as exc:
            # The state is saved; only the readable history is missing. Say exactly that.
            result.exit_code = worst_exit_code((result.exit_code, 2))
            reason = exc.strerror or str(exc)
            result.message += (
                f"; the journal could not be written ({self.redact(reason)}); the state was saved"
            )

    def _save(self, state: AgentState, events: list[dict[str, Any]], result: TickResult) -> None:
        """Save; a state holding what cannot be written is made savable, and the journal says how."""
        try:
            self.store.save(state)
        except StateUnsavable:
            from .sanitize import make_savable

            changes = make_savable(state)
            self.store.save(state)
            events.append({"event": "sanitised", "changes": changes})
            result.message += f"; {len(changes)} unsavable value(s) in the state changed (see the journal)"

    def _journal(self, events: Iterable[dict[str, Any]], now: datetime, tick: int) -> None:
        if self._journal_file is None:
            self._journal_file = Journal(
                self.store.journal_path,
                max_bytes=self.config.journal.max_bytes,
                keep=self.config.journal.keep,
            )
        stamp = {"at": now.isoformat(), "agent": self.name, "tick": tick}
        stamped = [{**stamp, **e} for e in events]
        self._journal_file.append([self._redact_event(e) for e in stamped] if self._secrets else stamped)

    def _killed(self, reason: str, *, locked: bool) -> TickResult:
        """Stop: journal the kill when the lock can be had, never call the step. KILL wins (exit 3)."""
        message = f"stopped by {self.kill.path}: {reason}"
        result = TickResult(self.name, "killed", 3, message)
        event = [{"event": "kill", "reason": reason}]
        try:
            if locked:
                self._journal(event, self.clock(), 0)
            else:
                with self.store.lock():
                    self._journal(event, self.clock(), 0)
        except (HeartbeatError, OSError) as exc:
            # Busy or a broken state folder: the kill still holds; only its journal line is missing.
            result.message += f" (not journaled: {self.redact(str(exc))})"
        return result

    def note_left_behind(self, reason: str) -> None:
        """Journal that ``run`` ended while this agent's tick was still running (no lock: an emergency)."""
        event = {"event": "kill", "reason": reason, "abandoned": True, "note": "the tick was left running"}
        with contextlib.suppress(HeartbeatError, OSError):
            # The tick's thread holds the lock and is stuck; one O_APPEND write cannot tear its lines.
            self._journal([event], self.clock(), 0)

    # -- what a human does

    def pause(self, reason: str | None = None) -> AgentState:
        """Pause the agent: ticks do nothing until resumed."""
        with self.store.lock():
            state = self.store.load()
            state.status, state.status_reason = Status.PAUSED, reason or "paused by hand"
            self.store.save(state)
            self._journal([{"event": "pause", "reason": state.status_reason}], self.clock(), state.ticks)
            return state

    def resume(self, note: str | None = None) -> AgentState:
        """Clear ``needs_human``/``paused``, reset the streak; ``note`` becomes the next instructions."""
        with self.store.lock():
            now = self.clock()
            state = self.store.load()
            previous = state.status
            state.status, state.status_reason = Status.ACTIVE, None
            state.stuck_streak, state.recovery, state.escalation = 0, None, None
            state.instructions = note.strip() if note and note.strip() else None
            # A human acted: pages about the status just cleared must not arrive after this.
            # They are journaled as settled first, so a crash half-way repeats, never hides, one.
            from .notify import STATUS_KINDS

            settled = {n.key for n in state.notices if n.kind in STATUS_KINDS}
            state.notices = [n for n in state.notices if n.kind not in STATUS_KINDS]
            outbox = self.outbox() if self.outbox_waiting() else None
            if outbox is not None:
                settled.update(outbox.settle(self.name, dry_run=True))
            self.store.save(state)
            self._journal(
                [
                    {
                        "event": "resume",
                        "from": previous.value,
                        "note": state.instructions,
                        "settled": sorted(settled),
                    }
                ],
                now,
                state.ticks,
            )
            self.store.escalation_path.unlink(missing_ok=True)
            if outbox is not None:
                outbox.settle(self.name)
            return state

    def read_state(self) -> AgentState:
        """The current state, read without the lock (``status``, ``validate``), checked to save again."""
        state = self.store.load()
        try:
            state.model_dump_json()
        except ValueError as exc:  # e.g. nested deeper than pydantic serialises: no tick could save it
            raise StateCorrupt(
                self.store.state_path, f"cannot be written back: {str(exc).splitlines()[0]}"
            ) from None
        return state

    # -- secrets

    def redact(self, text: str) -> str:
        """``text`` with every configured secret cut out."""
        if not self._secrets:
            return text
        from .redact import redact

        return redact(text, self._secrets)

    def mask(self, value: Any) -> Any:
        """``value`` (a text, or args: nested dicts and lists) with every configured secret masked."""
        if not self._secrets:
            return value
        from .redact import mask_tree

        return mask_tree(value, self._secrets)

    def _redact_event(self, event: Mapping[str, Any]) -> dict[str, Any]:
        from .redact import mask_tree

        # Top-level texts lose URLs and secrets; nested ones (lists of deliveries...) their secrets.
        top = {k: self.redact(v) if isinstance(v, str) else v for k, v in event.items()}
        masked: dict[str, Any] = mask_tree(top, self._secrets)
        return masked

    def _resume_hint(self) -> str:
        agent = f" --agent {self.name}" if len(self.config.all_agents()) > 1 else ""
        return f'heartbeat resume{agent} --note "what to do differently"'


def _metric_timeout(config: HeartbeatConfig) -> float:
    return config.progress.timeout.total_seconds() if config.progress else 60.0


class _StepGuard:
    """Who settles a step: the tick when it returns, or the watchdog when KILL abandons it."""

    __slots__ = ("lock", "result", "returned")

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.returned = False
        self.result: TickResult | None = None


def _action_events(ctx: StepContext, state: AgentState, volatile: Sequence[str]) -> list[dict[str, Any]]:
    """One journal event per action of the tick, also those the bounded history no longer holds."""
    kept = {a.index: a for a in state.history[-len(ctx.recorded) :]} if ctx.recorded else {}
    events = []
    for index, tool, args, length, error, cost in ctx.recorded:
        record = kept.get(index)
        if record is not None:
            summary = record.summary
        else:
            from .detectors import summarize

            summary = summarize(tool, args, volatile)
        events.append(
            {
                "event": "action",
                "index": index,
                "tool": tool,
                "summary": summary,
                "output_len": length,
                "error": error,
                "cost": cost,
            }
        )
    return events


def _describe(result: TickResult) -> str:
    parts = [f"tick {result.tick}: {result.actions} action(s)"]
    if result.progress is not None:
        parts.append(f"progress {result.progress:g}")
    if result.progress_error:
        parts.append(f"metric error: {result.progress_error}")
    if result.step_error:
        parts.append(f"step raised {result.step_error}")
    decision = result.decision
    if decision is not None and decision.action != "continue":
        kinds = ", ".join(a.kind for a in result.anomalies)
        parts.append(f"stuck ({kinds}) -> {decision.action}, streak {decision.stuck_streak}")
    return "; ".join(parts)


def _when(state: AgentState) -> str:
    at = state.escalation.at if state.escalation else state.last_tick_at
    return at.isoformat(timespec="seconds") if at else "?"


def _ago(delta: Any) -> str:
    seconds = int(delta.total_seconds())
    if seconds < 3600:
        return f"{seconds // 60} min"
    if seconds < 86400:
        return f"{seconds // 3600} h"
    return f"{seconds // 86400} d"
