"""A long-running process's handle on an agent's state folder: live calls, heartbeats by stretches.

An MCP proxy, an OpenTelemetry pipeline or a framework agent inside a server
lives for hours and sees tool calls one at a time. :class:`Session` makes it
an agent like any other (``status``, ``log``, ``resume``, ``kill`` work on it).

A heartbeat is a *stretch* of live calls: an ordinary
:meth:`heartbeat.tick.runner.Heartbeat.tick` runs in a worker thread whose step
*is* the stretch, each recorded call goes straight into its
:class:`~heartbeat.tick.context.StepContext` (the detectors run at once, on the
caller's thread), then the tick goes on as every tick does. A stretch ends when

- a recorded action or model call trips a detector or the budget: the policy decides at once
  (:attr:`Session.instructions`, or :meth:`Session.check` says a human is needed); for an
  ``observer`` (the OpenTelemetry processor: nothing reaches the agent), the budget alone;
- ``actions`` actions were recorded (50), or ``seconds`` passed (60);
- no call came for ``idle`` seconds (2): the lock is then free and ``state.json`` current while
  the agent thinks (a heartbeat is roughly one model turn; one begun within ``wake_gap`` seconds
  (60) of the last call is the agent's next turn, :attr:`~heartbeat.tick.context.StepContext.turn`);
- the KILL file appears (looked at every 50 ms, and by :meth:`Session.check`) or the fleet stop
  (``[stop]``) is engaged (read at most a second before, as the step watchdog reads it), or on
  :meth:`Session.flush`/:meth:`Session.close`.

While a stretch is open the session holds the state folder's lock, as a
running tick does: a ``heartbeat resume`` waits for it (up to 15 s), a
``heartbeat tick`` exits 5. A ``heartbeat pause`` leaves a request in the
state folder while it waits: the stretch ends on it within 50 ms and no new
one opens, so a human's pause wins against a busy session. Budgets count per
stretch (``actions_per_tick``) and per day; ``max_ticks`` counts stretches.

API (the recorder mirrors :class:`~heartbeat.tick.context.StepContext`, so an
adapter can take either)::

    session = Session.from_files(state_dir="state")   # or Session(config, agent)
    stop = session.check()          # before a call: None, or a Stop saying why not
    if stop:                        # stop.kind: killed | needs_human | paused | locked | error
        refuse(stop.message)
    else:
        text = call_the_tool()
        anomaly = session.record("search", {"q": "x"}, output=text)  # error=..., cost=...
        session.record_usage("gpt-4o", 1200, 300)  # a model call: spend, never an action
        if anomaly:                 # the heartbeat ended and the policy decided
            tell_the_model(session.instructions or anomaly.message)
        note = session.take_note()  # a person's `resume --note`, or a heartbeat's end's instructions: once
    session.killed                  # the KILL file (read from disk) or the fleet stop
    session.stopped                 # a Stop known without opening a heartbeat (KILL, a pause), else None
    session.last                    # the TickResult of the last finished heartbeat
    session.close()                 # end the open heartbeat (saved, journaled); also done at exit

``record`` raises :class:`Stopped` when no heartbeat can be opened (KILL, a
human awaited, the lock busy): a call that ran is then journaled only (an
action marked ``after_stop``); so does ``record_usage``, whose call was paid
for: its spend is added to ``state.json`` and journaled all the same
(:mod:`heartbeat.tick.late`). Thread-safe; opening or ending blocks a few ms.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Mapping, Sequence
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..config.file import AgentConfig, HeartbeatConfig
from ..config.flags import config_with_overrides
from ..core.models import Anomaly
from ..tick.context import StepContext
from ..tick.control import pause_requested
from ..tick.late import Kept, note_after_stop, note_usage_after_stop
from ..tick.runner import Heartbeat, TickResult, utc_now
from .closing import Cut, close_at_exit
from .filestops import kill_found, pause_stop, state_mark
from .notes import Note
from .stops import Stop, Stopped, overruled, stop_of
from .waiting import Waiting

if TYPE_CHECKING:
    from ..detect.progress import ProgressMetric
    from ..notify.notifiers import Notifier

__all__ = ["Session", "Stop", "Stopped"]

# How long to wait between two tries of a busy lock (another heartbeat of the same agent).
_LOCK_POLL = 0.05
# How often an open heartbeat looks at the KILL file while no call comes: it ends (saved)
# within this, as a cooperative step does, well inside any watchdog's grace before abandoning.
_KILL_POLL = 0.05


class Session:
    """One agent's state folder, fed by live calls; see the module docstring for the protocol."""

    def __init__(
        self,
        config: HeartbeatConfig,
        agent: AgentConfig | None = None,
        *,
        actions: int = 50,
        seconds: float = 60.0,
        idle: float = 2.0,
        wake_gap: float = 60.0,
        lock_wait: float = 2.0,
        observer: bool = False,
        progress: ProgressMetric | None = None,
        notifiers: Sequence[Notifier] | None = None,
        clock: Callable[[], datetime] = utc_now,
    ) -> None:
        if isinstance(actions, bool) or not isinstance(actions, int) or actions < 1:
            raise ValueError(f"actions must be an int >= 1, not {actions!r}")
        bounds = (
            ("seconds", seconds, 0.001),
            ("idle", idle, 0.001),
            ("wake_gap", wake_gap, 0),
            ("lock_wait", lock_wait, 0),
        )
        for name, value, low in bounds:
            if isinstance(value, bool) or not isinstance(value, int | float) or not low <= value < 1e9:
                raise ValueError(f"{name} must be a number of seconds >= {low}, not {value!r}")
        self.actions, self.lock_wait, self.observer = actions, lock_wait, observer
        self.seconds, self.idle, self.wake_gap = float(seconds), float(idle), float(wake_gap)
        self._hb = Heartbeat(
            config, agent, step=self._stretch, progress=progress, notifiers=notifiers, clock=clock
        )
        self._hb.signalled = self._cut = Cut()  # a signal ends the process: its heartbeat ends promptly
        self._cond = threading.Condition()
        # One opener or collector of the worker at a time (re-entrant: opening collects first);
        # never held while recording, so calls into an open heartbeat never wait for it.
        self._opening = threading.RLock()
        # Shared between the caller and the worker, under _cond:
        self._ctx: StepContext | None = None  # the open stretch's context
        self._ending = False  # the open stretch (or the one being opened) is to end
        self._result: TickResult | None = None  # the worker's finished tick, not yet collected
        self._count = 0
        self._began = self._last_call = 0.0
        self._last_at: datetime | None = None  # the last recorded call's time, on the session's clock
        # Caller side:
        self._thread: threading.Thread | None = None
        self._waiting = Waiting(self._hb)  # needs_human/paused, as state.json said it when last read
        self._kill_seen = False
        self._probing = False  # a tick run only to journal a KILL: its step must return at once
        self._instructions: str | None = None
        self._decided: str | None = None  # the instructions of the last decision this session saw
        self._unseen: Note | None = None  # instructions no caller has been handed yet
        self._handing = False  # a finding ends the heartbeat: its caller hands on the decision
        self.last: TickResult | None = None
        """The TickResult of the last finished heartbeat (None before the first)."""
        close_at_exit(self)  # SIGTERM taken here: a framework may record its calls from worker threads

    @classmethod
    def from_files(
        cls,
        config: Path | str | None = None,
        *,
        state_dir: Path | str | None = None,
        kill_file: Path | str | None = None,
        agent: str | None = None,
        **options: Any,
    ) -> Session:
        """A session as the CLI resolves it: ``heartbeat.toml`` (default ./heartbeat.toml), then flags."""
        loaded, picked = config_with_overrides(config, state_dir=state_dir, kill_file=kill_file, agent=agent)
        return cls(loaded, picked, **options)

    # -- what the caller reads

    @property
    def heartbeat(self) -> Heartbeat:
        """The agent's Heartbeat (its store, kill switch, config and name)."""
        return self._hb

    @property
    def name(self) -> str:
        """The agent's name."""
        return self._hb.name

    @property
    def state_dir(self) -> Path:
        """The agent's state folder."""
        return self._hb.state_dir

    @property
    def kill_file(self) -> Path:
        """The agent's KILL file."""
        return self._hb.kill.path

    @property
    def killed(self) -> bool:
        """True while the KILL file exists (read from disk every time) or the fleet stop is engaged."""
        return kill_found(self._hb) is not None

    @property
    def observing(self) -> bool:
        """``[policy] mode = "observe"``: callers record and report, and never withhold or redirect."""
        return self._hb.config.policy.mode == "observe"

    @property
    def instructions(self) -> str | None:
        """The current instructions: the last decision's recovery text, or a human's resume note."""
        return self._instructions

    def take_note(self) -> Note | None:
        """Instructions the callers have not been handed yet, once: a human's ``resume --note``.

        Recovery instructions a caller got with the anomaly ``record`` returned
        are not notes; those of a decision at a heartbeat's end that no call
        tripped (``no_progress``), and after a restart the pending instructions
        of an earlier process, are (``Note.by_person`` is False).
        """
        with self._cond:
            note, self._unseen = self._unseen, None
        return note

    @property
    def stopped(self) -> Stop | None:
        """Why calls must not go on, as far as known without opening a heartbeat, else None.

        The KILL file (read now) or the fleet stop (the open heartbeat ends, the stop is
        journaled once); a ``heartbeat pause`` under way; or the ``needs_human``/``paused``
        status in ``state.json`` (read again once another process wrote it)."""
        kill = kill_found(self._hb)
        if kill is not None:  # a caller that stops here may never call check(): journal it now
            return self._on_kill(kill)
        asked = pause_stop(self._hb)
        if asked is not None:  # `heartbeat pause` waits for the lock: the open heartbeat ends on it
            return asked
        mark = state_mark(self._hb)
        known = self._waiting.known(mark)
        if known is None and self._waiting.written_since(mark) and not self.is_open:
            return self._waiting.read(mark)  # written by someone else: a pause, say
        return known

    @property
    def answers_at_once(self) -> bool:
        """Whether :meth:`check` and :attr:`stopped` answer without waiting: a heartbeat is open and
        the fleet stop was read (else they may open one, wait for the lock, read the fleet stop up
        to its deadline). ``record`` and ``record_usage`` may always wait: a finding ends the
        heartbeat, saved (and notified) before they return. Code on an event loop asks then from a
        worker thread (:meth:`heartbeat.integrations.Guard.offload`)."""
        fleet = self._hb.shared_stop
        return self.is_open and (fleet is None or fleet.read_yet)

    @property
    def unsaved(self) -> StepContext | None:
        """The open heartbeat's context (calls not saved yet), read without a lock: for an emergency."""
        return self._ctx

    @property
    def is_open(self) -> bool:
        """Whether a heartbeat (a stretch of calls) is open now."""
        with self._cond:
            return self._ctx is not None and not self._ending

    # -- the protocol

    def check(self) -> Stop | None:
        """Before a call: None when it may go ahead (a heartbeat is then open), else why not."""
        kill = kill_found(self._hb)
        if kill is not None:
            return self._on_kill(kill)
        self._kill_seen = False
        # A pause asked for ends the open heartbeat now: `stopped` said it (live round 44).
        paused = pause_requested(self._hb) is not None
        with self._cond:
            if self._ctx is not None and not self._ending:
                if not paused:
                    self._last_call = time.monotonic()
                    return None
                self._ending = True
                self._cond.notify_all()
        return self._open()

    def record(
        self,
        tool: str,
        args: Mapping[str, Any] | None = None,
        *,
        output: str | None = None,
        error: str | BaseException | None = None,
        cost: float = 0.0,
    ) -> Anomaly | None:
        """Record one action; the anomaly it tripped (the heartbeat then ends), else None; or Stopped."""
        return self._feed(
            lambda ctx: ctx.record(tool, args, output=output, error=error, cost=cost),
            1,
            lambda kind: note_after_stop(self._hb, tool, args, output, error, cost, kind),
        )

    def record_usage(
        self,
        model: str,
        input_tokens: int = 0,
        output_tokens: int = 0,
        cached_tokens: int = 0,
        *,
        cost: float | None = None,
    ) -> Anomaly | None:
        """One model call's tokens, as ``StepContext.record_usage``; past a limit the heartbeat ends, paused.

        Raises :class:`Stopped` when no heartbeat can be opened to hold either: the call was paid
        for all the same, so its spend is added to ``state.json`` and journaled (``after_stop``).
        """
        counts = (model, input_tokens, output_tokens, cached_tokens)
        return self._feed(
            lambda ctx: ctx.record_usage(*counts, cost=cost),
            0,
            lambda kind: note_usage_after_stop(self._hb, *counts, cost, kind),
        )

    def _feed(
        self, call: Callable[[StepContext], Anomaly | None], actions: int, ran: Callable[[str], Kept]
    ) -> Anomaly | None:
        """``call`` on the open heartbeat's context (opened if need be); an anomaly ends the heartbeat.
        ``ran``: journals a call that ran although no heartbeat holds it (why, given)."""
        while True:
            with self._cond:
                ctx = self._ctx
                if ctx is not None and not self._ending:
                    hit = call(ctx)
                    self._count += actions
                    self._last_call, self._last_at = time.monotonic(), self._hb.clock()
                    goes_on = hit is None or (self.observer and hit.kind != "budget")  # a run goes on
                    if goes_on and self._count < self.actions:
                        return hit
                    self._ending, self._handing = True, hit is not None
                    self._cond.notify_all()
                    break
            try:
                stop = self.check()
            except BaseException:  # a signal's exit (SIGTERM, Ctrl-C) as a heartbeat opened for it:
                ran("interrupted")  # the call ran, and no heartbeat will hold it
                raise
            if stop is not None:  # an action ran all the same: it goes to the journal
                kept = ran(stop.kind)
                raise Stopped(stop, journaled=kept.journaled, kept=kept.said)
        if hit is not None:  # the policy's answer (or the budget's pause) is needed now: wait for the tick
            self._collect()  # whose end may overrule the finding (the metric rose, a quiet wake-up)
        return None if hit is not None and overruled(hit, self.last) else hit

    def report_progress(self, value: float | None) -> None:
        """Report this heartbeat's progress (used when no metric is configured); opens one if needed."""
        if self.check() is not None:
            return
        with self._cond:
            if self._ctx is not None:
                self._ctx.report_progress(value)

    def flush(self) -> TickResult | None:
        """End the open heartbeat now and wait for it: saved, decided, journaled. Its result, else None."""
        with self._cond:
            if self._ctx is not None:
                self._ending = True
                self._cond.notify_all()
        return self._collect()

    def close(self) -> TickResult | None:
        """As :meth:`flush` (unmeasured while SIGTERM ends the process); the session may still be used."""
        self._cut.closing()
        return self.flush()

    def __enter__(self) -> Session:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"Session({self.name!r}, {self.state_dir}, {'open' if self.is_open else 'idle'})"

    # -- inside

    def _stretch(self, ctx: StepContext) -> None:
        """The step of the worker's tick: hand ``ctx`` to the callers until the stretch ends."""
        if self._probing:
            return
        last = self._last_at
        # Soon after the last call: the agent's next model turn, which is never an idle wake-up.
        ctx.turn = last is not None and (self._hb.clock() - last).total_seconds() < self.wake_gap
        # Its calls are a live model's, whatever the gap: a pattern they make within the heartbeat
        # is told at once (the first heartbeat too), one reaching into the wake-ups before is held.
        ctx.model_run, ctx.heard = True, not self.observer
        with self._cond:  # _ending as its opener left it: True if a signal unwound the opener
            self._ctx, self._count = ctx, 0
            self._began = self._last_call = time.monotonic()
            self._instructions = ctx.instructions
            if ctx.instructions is not None and ctx.instructions != self._decided:
                # A human's resume note, or the recovery text of a decision made before us.
                self._unseen = Note(ctx.instructions, by_person=ctx.instructions_by_person)
            self._cond.notify_all()
            try:
                while not self._ending and not ctx.killed and pause_requested(self._hb) is None:
                    now = time.monotonic()
                    due = min(self._began + self.seconds, self._last_call + self.idle)
                    if now >= due:
                        break
                    self._cond.wait(min(due - now, _KILL_POLL))
            finally:
                self._ending = True
                self._ctx = None

    def _work(self) -> None:
        """The worker thread: one tick (never raises; a bug of ours becomes an error result)."""
        try:
            result = self._hb.tick()
        except BaseException as exc:  # the callers wait for a result: they must always get one
            result = TickResult(self.name, "error", 1, f"internal error: {type(exc).__name__}: {exc}")
        with self._cond:
            self._result = result
            self._ctx = None
            self._cond.notify_all()

    def _collect(self) -> TickResult | None:
        """Wait for the worker's tick (if one was started), take its result and learn from it."""
        with self._opening:
            thread = self._thread
            if thread is None:
                return None
            with self._cond, self._cut.noting():  # a signal's exception: its tick ends promptly
                # Its result waited for, never join(): on Python 3.11 a join a signal's exception cuts
                # (SIGTERM's SystemExit) marks a running thread stopped (CPython gh-90882).
                while self._result is None and thread.ident is not None:  # no ident: never started
                    self._cond.wait()
                result, self._result = self._result, None
            self._thread = None
            if result is not None:
                self._learn(result)
            return result

    def _learn(self, result: TickResult) -> None:
        self.last = result
        self._waiting.learn(result)
        if result.decision is not None:
            # A note still unseen stays due: its heartbeat may have ended (idle, a slow call) before
            # any caller came back to take it, and this decision cleared it from state.json.
            # Decided at the heartbeat's end (its metric flat), no call told it: the next caller is
            # handed it, or the model never hears what a human is later told it tried.
            told = result.decision.instructions
            person = self._unseen is not None and self._unseen.by_person
            if told is not None and told != self._decided and not self._handing and not person:
                self._unseen = Note(told, by_person=False)
            self._instructions = self._decided = told
        self._handing = False

    def _open(self) -> Stop | None:
        """Open a heartbeat: None once its step runs, else why the tick did not call it."""
        with self._opening:
            with self._cond:
                if self._ctx is not None and not self._ending:
                    return None  # another caller opened one meanwhile
            self._collect()  # the last tick holds the lock until it is saved
            asked = pause_stop(self._hb)
            if asked is not None:  # `heartbeat pause` waits for the lock: let the human in first
                return asked
            waiting = self._waiting.still()
            if waiting is not None:  # nothing changed on disk: still waiting, no tick needed
                return waiting
            deadline = time.monotonic() + self.lock_wait
            while True:
                thread = threading.Thread(target=self._work, name=f"heartbeat-{self.name}", daemon=True)
                close_at_exit(self)
                with self._cond, self._cut.noting():  # a signal's exception: its tick ends promptly
                    self._result, self._ending, self._thread, self._cut.reason = None, False, thread, None
                    try:
                        thread.start()
                        while self._ctx is None and self._result is None:
                            self._cond.wait()
                    except BaseException:  # SIGTERM's SystemExit, Ctrl-C: no call will come into it,
                        self._ending = True  # so it ends as it opens, and the close at exit has it
                        raise
                    if self._ctx is not None:
                        return None
                result = self._collect()
                stop = stop_of(result) if result is not None else None
                if stop is None:  # its stretch ran and ended already (a very short idle): go ahead
                    return None
                if stop.kind == "locked" and time.monotonic() < deadline:
                    time.sleep(_LOCK_POLL)
                    continue
                return stop

    def _on_kill(self, kill: Stop) -> Stop:
        """KILL or the fleet stop: end the open heartbeat (saved), make sure the stop is journaled, refuse."""
        with self._cond:
            was_open = self._ctx is not None and not self._ending
            if was_open:
                self._ending = True
                self._cond.notify_all()
        if was_open or not self._kill_seen:
            with self._opening:
                self._collect()
                # A KILL that ended the heartbeat was journaled by its tick; the fleet stop (or a
                # KILL seen between heartbeats) by a tick run only for that, whose step returns at once.
                if not self._kill_seen and (self.last is None or self.last.outcome != "killed"):
                    self._probing = True
                    try:
                        self.last = self._hb.tick()
                    finally:
                        self._probing = False
        self._kill_seen = True
        return kill
