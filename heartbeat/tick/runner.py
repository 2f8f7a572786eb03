"""One heartbeat of one agent: lock -> load -> step -> decide -> settle -> save -> journal, then deliver.

The runner is the imperative shell around the pure parts: it reads the
clock (an injected ``clock``), touches files, calls the agent's step and
sends notifications. What a tick *means* (the new state, the notices, the
events, the outcome) is :func:`heartbeat.core.settle.settle`'s to say; the
detectors and the policy are pure too. Every tick returns a
:class:`TickResult` that the CLI prints and the journal records.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Mapping, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..base.credential_text import mask_credential_text
from ..base.errors import HeartbeatError, StateLocked, StateWriteError
from ..config.file import AgentConfig, HeartbeatConfig
from ..core.budget import exhausted, roll_over
from ..core.models import AgentState, Status
from ..core.result import TickResult
from ..core.settle import Settlement, TickFacts, Where, settle
from ..detect.detectors import build_detectors
from ..state.journal import Journal
from ..state.killswitch import KillSwitch
from ..state.store import StateStore
from . import control, effects
from .context import Step
from .plugins import AgentPlugins
from .stepcall import interrupted_calls, run_step
from .stepguard import Closing, StepGuard
from .watchdog import TickInterrupted

# Names for types only: the modules are imported where used (plugins, effects, warm), as most
# ticks of a healthy agent never need them, and a cron tick pays for every import.
if TYPE_CHECKING:
    from ..core.delivery import DeliveryReport
    from ..detect.monitor import Monitor
    from ..detect.progress import ProgressMetric
    from ..notify.notifiers import Notifier
    from ..notify.outbox import Outbox
    from ..state.warm import WarmStart
    from .sharedstop import SharedStop

__all__ = ["Heartbeat", "TickResult", "utc_now"]


def utc_now() -> datetime:
    """The real clock: timezone-aware UTC."""
    return datetime.now(UTC)


def _end_orphans(scratch: str) -> None:
    """A scratch folder a SIGKILLed ``--exec`` tick left: end what still runs in it (after a crash only)."""
    from .orphans import end_processes_of

    end_processes_of(scratch)


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
        self._secrets = config.secrets()
        self.store = StateStore(self.state_dir, clock=clock, secrets=self._secrets, on_scratch=_end_orphans)
        self.kill = KillSwitch(config.resolve(self.agent.kill_file))
        self.plugins = AgentPlugins(config, self.agent, step=step, progress=progress, notifiers=notifiers)
        """The agent's step, progress metric and notifiers, each built from the config on first use."""
        self.detectors = build_detectors(config.detectors, search_path=config.base_dir)
        self._journal_file = Journal(
            self.store.journal_path, max_bytes=config.journal.max_bytes, keep=config.journal.keep
        )
        hint = control.resume_command(config, self.name, self.state_dir)
        report = str(self.store.report_path)
        self.where = Where(self.name, str(self.store.escalation_path), str(self.kill.path), hint, report)
        # heartbeat.state.warm's cache, made at the second stepping tick: a one-shot cron tick never loads it.
        self._warm: WarmStart | None = None
        self._stepped = False
        self.on_abandon: Callable[[TickResult], None] | None = None
        """Called (from the watchdog thread) when a step that did not return is abandoned on KILL."""
        self.stepping: StepGuard | None = None
        """The step of the tick under way, until the tick's save keeps its calls (for a stop that won't)."""
        self.delivering: Closing | None = None
        """A saved tick's last journal lines while it delivers: a stop then writes them."""
        self.signalled: Callable[[], str | None] | None = None  # see Agent.signalled
        self.shared_stop: SharedStop | None = None
        if config.stop is not None:
            from .sharedstop import SharedStop

            self.shared_stop = SharedStop.from_config(config)

    # -- plug-ins, loaded once and only from the config or flags, never from state.json

    def step(self) -> Step:
        """The agent's step (loaded from the config on first use)."""
        return self.plugins.step()

    def metric(self) -> ProgressMetric | None:
        """The progress metric, or None when none is configured."""
        return self.plugins.metric()

    def notifiers(self) -> list[Notifier]:
        """The configured notifiers (built on first use, so httpx loads only when needed); one that
        cannot be built stands in as one whose sends fail (``plugins.unbuilt`` says why)."""
        return self.plugins.notifiers()

    @property
    def warm(self) -> WarmStart:
        """What the last tick of this process left for the next (see :mod:`heartbeat.state.warm`)."""
        if self._warm is None:
            from ..state.warm import WarmStart

            self._warm = WarmStart()
        return self._warm

    def validate(self) -> None:
        """Load every plug-in now, so a bad config fails before the first tick."""
        self.step()
        self.metric()
        self.plugins.check_notifiers()

    # -- the tick

    def tick(self) -> TickResult:
        """Run one heartbeat and return what happened; never raises a HeartbeatError or OSError."""
        if not any(n.type == "ping" for n in self.config.notify):
            return self._guarded_tick()
        from .pinground import PingRound  # only when a dead man's switch is configured

        return PingRound(self.config.notify).around(self, self._guarded_tick)

    def shared_stop_reason(self) -> str | None:
        """Why the fleet-wide stop (``[stop]``) says to stop, or None (also None when not configured).

        From a reading at most a second old that every agent of the process shares
        (:meth:`~heartbeat.sharedstop.SharedStop.current`): ``status`` and ``metrics``
        send a stop URL one request, not one per agent. A tick reads it fresh.
        """
        return self.shared_stop.current() if self.shared_stop is not None else None

    def _guarded_tick(self) -> TickResult:
        self.delivering = None
        try:
            result = self._tick()
            if (closing := self.delivering) is not None:  # a saved tick's notices, sent with the lock let
                result.absorb(self.retry_outbox(self.clock(), force=False))  # go (the outbox has its own):
                closing()  # a webhook that never answers holds up no `pause`, `resume` or next tick
                self.delivering = None
            return result
        except TickInterrupted as exc:  # SIGTERM/SIGINT of `heartbeat tick`: journaled, then the caller exits
            control.journal_interrupted(self, str(exc))
            raise
        except StateLocked as exc:
            return TickResult(self.name, "locked", 5, self.redact(str(exc)))
        except HeartbeatError as exc:
            return TickResult(self.name, "error", exc.exit_code, self.redact(str(exc)))
        except OSError as exc:  # a full disk or a broken state folder: one clear line, exit 2
            error = StateWriteError(Path(str(exc.filename or self.state_dir)), exc.strerror or str(exc))
            return TickResult(self.name, "error", 2, self.redact(str(error)))

    def _tick(self) -> TickResult:
        # Taken out first: a tick that stops half way leaves none behind.
        warm = self._warm.take() if self._warm is not None else None
        stopped = control.stopped_before_lock(self)  # KILL, then the fleet stop
        if stopped is not None:
            return stopped
        self.config.require_env()  # a tick may have to notify: its secrets must be there
        control.let_pause_in(self)  # a human's pause waiting for the lock goes first
        with self.store.lock():
            now = self.clock()
            state, monitor = (
                (self.store.load(), None) if warm is None else warm.load(self.store, self.detectors)
            )
            result = TickResult(self.name, "ran", 0, "")
            # Notices a crash left between saving a decision and queueing it are queued below.
            if effects.outbox_waiting(self.store):  # most ticks: nothing waits, no report is built
                result.absorb(self.retry_outbox(now, force=False))
            spent = None
            if state.status is Status.ACTIVE:
                state.budget = roll_over(state.budget, now, self.config.budget)
                spent = exhausted(state, self.config.budget)
            if state.status is not Status.ACTIVE or spent is not None:
                names = [n.name for n in self.config.notify]
                pending = state.status is Status.NEEDS_HUMAN and effects.reaching_someone(self.store, names)
                facts = TickFacts(pending_delivery=pending)
                settled = settle(state, None, (), spent, now, self.config, where=self.where, facts=facts)
                return self._finish(settled, [], result)
            reason = self.kill.reason()
            if reason is not None:
                return control.killed(self, reason, locked=True)
            # A folder that cannot take the state must not let the agent act with nothing saved.
            self.store.check_writable()
            with interrupted_calls(self):  # a signal before the save: the step's calls ran all the same
                stepped = run_step(self, state, now, monitor)
                if isinstance(stepped, TickResult):
                    return stepped  # abandoned on KILL: this tick's unsaved work is dropped
                settled = settle(
                    state, stepped.decision, stepped.anomalies, stepped.breach, now, self.config,
                    where=self.where, facts=stepped.facts,
                )  # fmt: skip
                result.take_facts(stepped.facts, stepped.decision)
                return self._finish(settled, stepped.events, result, stepped.monitor)

    def _finish(self, settled: Settlement, events: list[dict[str, Any]], result: TickResult,
                monitor: Monitor | None = None) -> TickResult:  # fmt: skip
        """Save the settled state; queue what it decided; journal (the rest after its delivery)."""
        state = settled.state
        result.take_settlement(settled)
        events += settled.events
        ready = None
        if monitor is not None:  # from the second stepping tick on: the first may be the only one
            ready = self.warm.prepare(settled, monitor, self.detectors) if self._stepped else None
            self._stepped = True
        tick = result.tick if result.tick is not None else state.ticks
        # A quiet tick's journal lines, encoded before the save: after its fsyncs, twice the cost.
        lines = None
        if not state.notices:
            with contextlib.suppress(TypeError, ValueError):  # then encoded (and failing) as before
                lines = self._journal_lines(events + result.closing_events(), tick)
        changed = effects.save(self.store, state, events) if settled.save else ""
        self.stepping = None  # its calls are in state.json: a signal from here on drops nothing of them
        if changed:  # the message and the events changed: the lines are encoded again below
            result.message, lines = result.message + changed, None
        announcing = bool(state.notices)
        if announcing:
            effects.announce(
                self, state, events, result, resume_hint=self.where.resume_hint, secrets=self._secrets
            )
        if self._warm is not None:
            self._warm.keep(ready, self.store.last_save, changed=bool(changed))
        if not announcing:
            self._append(result, lines or self._journal_lines(events + result.closing_events(), tick))
            return result
        # Journaled before the delivery, which may hang and be stopped: the stop writes the rest.
        self._append(result, self._journal_lines(events, tick))
        self.delivering = Closing(
            lambda: self._append(result, self._journal_lines(result.closing_events(), tick))
        )
        return result

    def _append(self, result: TickResult, lines: bytes) -> None:
        """Journal the tick's ``lines``; the state is saved, so a failure is only said (exit 2), once."""
        try:
            self._journal_file.write(lines)
        except OSError as exc:
            reason = self.redact(exc.strerror or str(exc))
            line = f"the journal could not be written ({reason}); the state was saved"
            if line not in result.errors:
                result.add_error(line)

    def _journal_lines(self, events: Sequence[Mapping[str, Any]], tick: int) -> bytes:
        """``events`` as journal lines, stamped with the clock, the agent and ``tick`` (redacted)."""
        return self._journal_file.encode_stamped(
            events, at=self.clock(), agent=self.name, tick=tick, secrets=self._secrets
        )

    def journal(self, events: Sequence[Mapping[str, Any]], now: datetime, tick: int) -> None:
        """Append ``events`` stamped with the clock, the agent and ``tick`` (redacted); hold the lock."""
        self._journal_file.write(self._journal_lines(events, tick))

    def note_left_behind(self, reason: str) -> None:
        """Journal that ``run`` ended while this agent's tick was still running (no lock: an emergency)."""
        control.note_left_behind(self, reason)

    # -- the outbox

    def outbox(self) -> Outbox:
        """The agent's outbox of undelivered notifications."""
        return effects.outbox(self.store, self._secrets)

    def outbox_waiting(self) -> bool:
        """Whether anything waits in outbox/."""
        return effects.outbox_waiting(self.store)

    def retry_outbox(self, now: datetime, *, force: bool) -> DeliveryReport:
        """Try to deliver what waits in the outbox (only entries that are due unless forced)."""
        with control.kill_ends_delivery(self):  # a tick's: what is not delivered waits in outbox/
            return effects.deliver(self.store, self.notifiers, now, force=force, secrets=self._secrets)

    # -- what a human does (heartbeat.tick.control)

    def pause(self, reason: str | None = None) -> AgentState:
        """Pause the agent: ticks do nothing until resumed."""
        return control.pause(self, reason)

    def resume(self, note: str | None = None, *, seen: Status | None = None) -> AgentState:
        """Clear ``needs_human``/``paused``, reset the streak; ``note`` becomes the next instructions
        (``seen``: the status the human saw, see :func:`.control.resume`)."""
        return control.resume(self, note, seen=seen)

    def read_state(self) -> AgentState:
        """The current state, read without the lock (``status``, ``validate``), checked to save again."""
        return control.read_state(self)

    # -- secrets

    def redact(self, text: str) -> str:
        """``text`` with every configured secret cut out and the credentials it gives away masked
        (a step's exception quoting a URL with its ``?api_key=``)."""
        text = mask_credential_text(text)
        if not self._secrets:
            return text
        from ..base.redact import redact

        return redact(text, self._secrets)

    def mask(self, value: Any) -> Any:
        """``value`` (a text, or args: nested dicts and lists) with every configured secret masked."""
        if not self._secrets:
            return value
        from ..base.redact import mask_tree

        return mask_tree(value, self._secrets)
