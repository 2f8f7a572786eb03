"""``heartbeat run``: ticks on a schedule; stops on KILL (within half a second), a signal or ``--ticks``.

One daemon thread per agent ticks it at once and then on its schedule; the
main thread watches every KILL file :data:`KILL_POLL_SECONDS` apart; one more
thread retries undelivered notifications. Waits run on the monotonic clock,
so a wall clock stepped back (NTP, a resumed VM) never stalls an interval
schedule or the KILL watch; a cron schedule follows the wall clock, as cron
does, asking the trigger for the next fire time after *now* (never after the
previous fire time, which a stepped-back clock would put far ahead).

On KILL the run ends within half a second whatever a tick is doing: an
``--exec`` step's process group is ended, a Python step that does not return
is abandoned (its unsaved work dropped, the journal says so, see
:mod:`heartbeat.tick.watchdog`), and a tick still delivering notifications is
left behind (the journal says so too). On SIGINT/SIGTERM no new tick starts,
``--exec`` steps are ended, and a Python step may finish (exit 0); a tick under
way begins no step and measures no progress after the signal, nor waits for a
measurement (:attr:`~heartbeat.tick.agent.Agent.signalled`); a second signal
abandons the step and the run exits 128 + the signal's number (130 for Ctrl-C).

Two runs on one state folder would double the agent's pace: each run holds
the store's run lock for its whole life, and a second one refuses to start
(:class:`~heartbeat.base.errors.StateLocked`, exit 5). apscheduler is imported
here only for its trigger maths, so a cron ``heartbeat tick`` never pays for it.
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
import threading
import time
import traceback
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from functools import partial
from types import FrameType

from apscheduler.triggers.base import BaseTrigger
from apscheduler.triggers.interval import IntervalTrigger

from ..base.errors import HeartbeatError, StateWriteError, worst_exit_code
from ..state.killswitch import fleet_stop_name, stopped_by
from .control import note_delivery_between_ticks, note_stopped_between_ticks
from .execstep import end_all
from .runner import Heartbeat, TickResult, utc_now
from .sharedstop import POLL_SECONDS
from .stepcall import account_interrupted
from .watchdog import done_within

__all__ = ["RunSummary", "Runner"]

KILL_POLL_SECONDS = 0.05
"""How often ``run`` looks at the KILL files."""

STOP_GRACE_SECONDS = 0.3
"""How long a stopping run waits for running ticks (after KILL) before it leaves them behind."""

FLEET_STOP_POLL_SECONDS = POLL_SECONDS
"""How often ``run`` reads the fleet-wide stop (``[stop]``), between ticks and (through the step
watchdog) during them: at most once a second per process (:data:`heartbeat.tick.sharedstop.POLL_SECONDS`)."""

OUTBOX_POLL_SECONDS = 1.0
"""How often undelivered notifications are looked at between ticks."""

_SIGINT_NOTES = (
    b"heartbeat: stopping after this tick (Ctrl-C again to abort)\n",
    b"heartbeat: aborting: a tick still running is abandoned (its work is not saved)\n",
)
_SIGTERM_NOTES = (
    b"heartbeat: SIGTERM: stopping after this tick (a second SIGTERM aborts)\n",
    _SIGINT_NOTES[1],
)
_CRON_RECHECK_SECONDS = 30.0  # a long cron wait is re-measured against the wall clock this often


@dataclass
class RunSummary:
    """How a run ended."""

    exit_code: int = 0
    reason: str = ""
    ticks: dict[str, int] = field(default_factory=dict)
    missed: int = 0
    abandoned: list[str] = field(default_factory=list)
    """Agents whose tick was still running when the run ended (left behind on KILL)."""


class Runner:
    """Drives one or more heartbeats on a schedule until KILL, a signal or ``--ticks``.

    ``clock`` is the wall clock (cron schedules and the outbox's retry times);
    ``monotonic`` measures every wait. Both are injectable for tests.
    """

    def __init__(
        self,
        heartbeats: Sequence[Heartbeat],
        trigger: BaseTrigger,
        *,
        ticks: int | None = None,
        misfire_grace_time: timedelta = timedelta(minutes=5),
        on_tick: Callable[[TickResult], None] = lambda result: None,
        on_note: Callable[[str], None] = lambda text: print(text, file=sys.stderr),
        clock: Callable[[], datetime] = utc_now,
        monotonic: Callable[[], float] = time.monotonic,
        initial_tick: bool = True,
    ) -> None:
        self.heartbeats = {hb.name: hb for hb in heartbeats}
        self.trigger = trigger
        self.max_ticks = ticks
        self.on_tick = on_tick
        self.on_note = on_note
        self.clock = clock
        self.monotonic = monotonic
        self.grace = misfire_grace_time.total_seconds()
        self.initial_tick = initial_tick
        self._started_at: dict[str, datetime] = {}  # wall time each agent's last tick started
        self.summary = RunSummary(ticks={name: 0 for name in self.heartbeats})
        self._last: dict[str, TickResult] = {}
        self._lock = threading.Lock()
        self._stop = threading.Event()  # set once: no new tick starts
        self._settled = threading.Condition(self._lock)  # a tick finished or was abandoned
        self._running: dict[str, bool] = {}  # agent -> a tick of it is under way and not abandoned
        self._signals = 0
        self._signals_done = 0
        self._signal_name = ""
        self._signum = 0
        self._output_failed = False
        # Each agent's stop (set for every agent when the run ends): a KILL file or fleet stop that
        # only some agents read stops those, and the run goes on with the others.
        self._halted = {name: threading.Event() for name in self.heartbeats}
        self._kills: dict[str, tuple[str, str]] = {}  # agent -> (the switch, its reason) that stopped it
        self._kill_noted: set[str] = set()  # agents whose journal says so (their tick's, or ours)

    # -- the run

    def run(self) -> RunSummary:
        """Block until stopped; returns how the run ended. StateLocked if another run drives an agent."""
        with self._run_locks():
            threads = [
                threading.Thread(target=self._agent_loop, args=(name,), name=f"tick:{name}", daemon=True)
                for name in self.heartbeats
            ]
            helpers = [threading.Thread(target=self._outbox_loop, name="outbox", daemon=True)]
            with self._signal_handlers():
                for thread in [*threads, *helpers]:
                    thread.start()
                while not self._stop.wait(KILL_POLL_SECONDS):
                    self._act_on_signals()
                    self._check_kill()
                    if not any(t.is_alive() for t in threads):
                        self._end(self.summary.exit_code, self.summary.reason or "every agent is done")
                self._wind_down(threads)
        stopped = sorted(self._kills)
        if stopped and self.summary.exit_code in (0, 1, 4):
            # Some agents ran to the end, but a KILL stopped the others: exit 3 says so, as for all.
            with self._lock:
                self.summary.exit_code = 3
                switches = sorted({stopped_by(*self._kills[name]) for name in stopped})
                said = f"{', '.join(stopped)} {'; '.join(switches)}"
                self.summary.reason = f"{self.summary.reason}; {said}" if self.summary.reason else said
        # The run itself succeeded (exit 0); who still waits for a human is said, not an error.
        waiting = [n for n, r in self._last.items() if r.outcome == "needs_human"]
        if waiting:
            self.summary.reason += f"; waiting for a human: {', '.join(waiting)}"
        return self.summary

    @contextlib.contextmanager
    def _run_locks(self) -> Iterator[None]:
        for hb in self.heartbeats.values():  # every folder first: a failed run makes none of them
            reason = hb.store.cannot_make()
            if reason is not None:
                raise StateWriteError(hb.state_dir, reason, kept=False)
        with contextlib.ExitStack() as stack:
            for hb in self.heartbeats.values():
                stack.enter_context(hb.store.run_lock())
            yield

    @contextlib.contextmanager
    def _signal_handlers(self) -> Iterator[None]:
        if threading.current_thread() is not threading.main_thread():
            yield  # a library caller's thread: signals stay theirs
            return
        previous = {sig: signal.signal(sig, self._on_signal) for sig in (signal.SIGINT, signal.SIGTERM)}
        for hb in self.heartbeats.values():  # a tick under way at the signal ends promptly
            hb.signalled = self._signalled
        try:
            yield
        finally:
            for sig, handler in previous.items():
                signal.signal(sig, handler)
            for hb in self.heartbeats.values():
                hb.signalled = None

    def _signalled(self) -> str | None:
        """Why the run stops, once SIGTERM or SIGINT came (any thread): a tick under way begins no step
        and no measurement and waits for none (:attr:`heartbeat.tick.agent.Agent.signalled`)."""
        return f"stopped by {self._signal_name}" if self._signals else None

    def _wind_down(self, threads: list[threading.Thread]) -> None:
        """Wait for running ticks: after KILL (or a second signal) at most STOP_GRACE_SECONDS."""
        deadline: float | None = None
        while True:
            self._act_on_signals()
            with self._settled:
                if not any(self._running.values()):
                    return
                hard = self.summary.exit_code == 3 or self._signals > 1
                if hard and deadline is None:
                    deadline = self.monotonic() + STOP_GRACE_SECONDS
                left = KILL_POLL_SECONDS if deadline is None else deadline - self.monotonic()
                if left <= 0:
                    behind = [name for name, busy in self._running.items() if busy]
                    break
                self._settled.wait(min(left, KILL_POLL_SECONDS))
            if not hard:
                self._check_kill()  # a KILL while a stopping run waits for its ticks still wins
        for name in behind:
            # Its thread is a daemon: it ends with the process. Say so where people look; the calls
            # its step made ran (journaled, spend counted), bounded: a hung disk must not hold the exit.
            hb = self.heartbeats[name]
            self.summary.abandoned.append(name)
            done_within(partial(account_interrupted, hb, self.summary.reason), STOP_GRACE_SECONDS)
            hb.note_left_behind(self.summary.reason)

    def _agent_loop(self, name: str) -> None:
        """Tick one agent at once, then on its schedule, until the run stops or its ticks are done."""
        hb = self.heartbeats[name]
        due = self.monotonic()
        previous: datetime | None = None
        if not self.initial_tick:  # cron-like: the first tick on the schedule, not at start
            due, previous = self._next_due(None)
        while not self._halted[name].is_set():
            if not self._wait_until(name, due):
                return
            late = self.monotonic() - due
            if late > self.grace:
                self.summary.missed += 1  # coalesced: this slot is skipped, the next one runs
                due, previous = self._next_due(previous)
                continue
            started = self.monotonic()
            result = self._tick(name, hb)
            if result is None:
                return  # abandoned on KILL, or the run stopped meanwhile
            if result.outcome == "killed":
                self._halt([name], result.message, self._switch_of(name), done=name)
                self._check_kill()  # the agents between ticks that read the same switch stop too
                return
            if result.outcome == "error":
                with self._lock:
                    self.summary.exit_code = _worse(self.summary.exit_code, result.exit_code)
                    self.summary.reason = result.message
                return
            if self.max_ticks is not None and self.summary.ticks[name] >= self.max_ticks:
                with self._lock:
                    self.summary.reason = self.summary.reason or f"{self.max_ticks} tick(s) done"
                return
            due, previous = self._next_due(previous, started)

    def _next_due(
        self, previous: datetime | None, started: float | None = None
    ) -> tuple[float, datetime | None]:
        """The monotonic time of the next tick (and, for cron, its wall time)."""
        now = self.monotonic()
        if isinstance(self.trigger, IntervalTrigger):
            interval = self.trigger.interval.total_seconds()
            base = started if started is not None else now
            due = base + interval
            if due < now:  # the tick overran its interval: the slots it covered are coalesced
                self.summary.missed += int((now - due) // interval)
                due = now
            return due, None
        wall = self.clock()
        fire = self.trigger.get_next_fire_time(None, wall)
        if fire is not None and previous is not None and fire <= previous:
            fire = self.trigger.get_next_fire_time(None, previous + timedelta(seconds=1))
        if fire is None:  # a trigger that never fires again
            return float("inf"), None
        return now + max(0.0, (fire - wall).total_seconds()), fire

    def _wait_until(self, name: str, due: float) -> bool:
        """Sleep until ``due`` (monotonic); False when the run or the agent ``name`` stops first."""
        halted = self._halted[name]
        while True:
            left = due - self.monotonic()
            if left <= 0:
                return not halted.is_set()
            if halted.wait(min(left, _CRON_RECHECK_SECONDS)):
                return False

    def _tick(self, name: str, hb: Heartbeat) -> TickResult | None:
        with self._lock:
            if self._halted[name].is_set():
                return None
            self._running[name] = True
            self._started_at[name] = self.clock()
        hb.on_abandon = lambda result: self._abandoned(name, result)
        try:
            result = hb.tick()
        except Exception as exc:  # a bug must not kill the other agents' schedule; say it loudly
            self._note(f"{name}: internal error in tick:\n{traceback.format_exc()}")
            result = TickResult(name, "ran", 1, f"internal error: {type(exc).__name__}: {exc}")
        with self._settled:
            if not self._running.get(name):
                return None  # abandoned meanwhile: already reported
            self._running[name] = False
            self._settled.notify_all()
            self._last[name] = result
            self.summary.ticks[name] += 1
            # KILL or the fleet stop came while this tick ran and it ended without seeing it: say so.
            noted = result.outcome == "killed" or name in self._kill_noted
            late = None if noted else self._kills.get(name)
            if late is not None:
                self._kill_noted.add(name)
        if late is not None:
            note_stopped_between_ticks(hb, late[1], late[0])
        self._report(result)
        return result

    def next_run(self, name: str) -> datetime | None:
        """When ``name`` ticks next, by the wall clock (None once it ticks no more)."""
        if self._stop.is_set() or (self.max_ticks is not None and self.summary.ticks[name] >= self.max_ticks):
            return None
        if isinstance(self.trigger, IntervalTrigger):
            started = self._started_at.get(name) or self.clock()
            interval: timedelta = self.trigger.interval
            return max(started + interval, self.clock())
        fire: datetime | None = self.trigger.get_next_fire_time(None, self.clock())
        return fire

    def _abandoned(self, name: str, result: TickResult) -> None:
        """A step that did not return was abandoned on KILL (watchdog thread)."""
        with self._settled:
            self._running[name] = False
            self._kill_noted.add(name)  # the watchdog journaled the stop
            self._settled.notify_all()
            self._last[name] = result
            self.summary.abandoned.append(name)  # its thread still runs the step
        self._report(result)
        self._halt([name], result.message, self._switch_of(name), done=name)
        self._check_kill()

    def _report(self, result: TickResult) -> None:
        """Hand a result to ``on_tick``; output that cannot be written never stops the run."""
        try:
            self.on_tick(result)
        except (OSError, ValueError) as exc:  # a closed stdout: BrokenPipeError, or I/O on a closed file
            if not self._output_failed:
                self._output_failed = True
                self._note(f"heartbeat: output cannot be written ({exc}); ticking goes on")

    def _note(self, text: str) -> None:
        with contextlib.suppress(OSError, ValueError):
            self.on_note(text)

    def _check_kill(self) -> None:
        """A KILL file or the fleet stop engaged: the agents that read it stop (journaled for each
        between ticks); the run ends once every agent has stopped."""
        for switch, reason, names in self._engaged():
            self._halt(names, stopped_by(switch, reason), (switch, reason))

    def _engaged(self) -> list[tuple[str, str, list[str]]]:
        """Each engaged switch that agents still going read: (the switch, its reason, those agents).

        KILL files first, then the fleet-wide stops (``[stop]``), each read once per pass, the fleet
        stop's latest answer (read at most once a second): ``latest()`` never blocks (a URL is read on
        a thread of its own), so a slow stop service never delays the KILL files' watch.
        """
        kills: dict[str, list[str]] = {}
        stops: dict[str, list[str]] = {}
        for name, hb in self.heartbeats.items():
            if not self._halted[name].is_set():
                kills.setdefault(hb.kill.name, []).append(name)
                if hb.shared_stop is not None:
                    stops.setdefault(hb.shared_stop.where, []).append(name)
        engaged = []
        for names in kills.values():
            kill = self.heartbeats[names[0]].kill
            reason = kill.reason()
            if reason is not None:
                engaged.append((kill.name, reason, names))
        for where, names in stops.items():
            shared = self.heartbeats[names[0]].shared_stop
            reason = shared.latest() if shared is not None else None
            if reason is not None:
                engaged.append((fleet_stop_name(where), reason, names))
        return engaged

    def _switch_of(self, name: str) -> tuple[str, str] | None:
        """(the switch, its reason) that stops the agent ``name`` now, if one still does."""
        return next(((switch, why) for switch, why, names in self._engaged() if name in names), None)

    def _halt(
        self, names: list[str], message: str, switch: tuple[str, str] | None, *, done: str | None = None
    ) -> None:
        """Stop the agents ``names`` (``message``: why, as a tick says it); journal the ``switch`` for
        each between ticks, once (``done``: its tick journaled it; an agent mid-tick has its tick's
        own kill event, or is journaled after it, see :meth:`_tick`). The last agent ends the run."""
        with self._lock:
            fresh = [name for name in names if not self._halted[name].is_set()]
            for name in names:
                if switch is not None:
                    self._kills.setdefault(name, switch)
                self._halted[name].set()
            if done is not None:
                self._kill_noted.add(done)
            idle = [n for n in names if n not in self._kill_noted and not self._running.get(n)]
            if switch is not None:
                self._kill_noted.update(idle)
            every = all(event.is_set() for event in self._halted.values())
        if every:
            self._end(3, message)
        elif switch is not None and fresh:  # the run goes on: say now who stopped, not only at its end
            self._note(f"heartbeat: {', '.join(fresh)} {message}; the others go on")
        if switch is not None:
            for name in idle:
                note_stopped_between_ticks(self.heartbeats[name], switch[1], switch[0])

    def _outbox_loop(self) -> None:
        """Retry undelivered notifications when due, between ticks (a busy lock: the tick does it)."""
        while not self._stop.wait(OUTBOX_POLL_SECONDS):
            for hb in self.heartbeats.values():
                if self._stop.is_set() or not hb.outbox_waiting():
                    continue
                # The outbox's own lock, not the state folder's: a webhook that takes its whole
                # deadline must not keep `pause`/`resume` (exit 5) or a tick waiting.
                try:
                    report = hb.retry_outbox(self.clock(), force=False)
                except (HeartbeatError, OSError) as exc:
                    self._note(f"{hb.name}: outbox not retried: {hb.redact(str(exc))}")
                    continue
                note_delivery_between_ticks(hb, report)
                for key in report.delivered:
                    self._note(f"{hb.name}: delivered {key}")

    def _on_signal(self, signum: int, frame: FrameType | None) -> None:
        # Only a count and a raw write: the handler interrupts the main thread anywhere, also
        # inside this run's own Event.set() or end_all(), and a second Ctrl-C taking their
        # locks there deadlocked. The main thread acts on it within KILL_POLL_SECONDS.
        self._signal_name = signal.Signals(signum).name  # named before counted: ticks read both
        self._signum = signum
        self._signals += 1
        notes = _SIGINT_NOTES if signum == signal.SIGINT else _SIGTERM_NOTES
        with contextlib.suppress(OSError):
            os.write(2, notes[min(self._signals, 2) - 1])

    def _act_on_signals(self) -> None:
        """Once per signal received (main thread): end --exec steps, start no new tick.

        The first signal stops the run gracefully (exit 0); a second one aborts it, and the
        run exits as a process ended by that signal does: 128 + its number (130 for Ctrl-C),
        unless KILL (3) stopped it already.
        """
        if self._signals > self._signals_done:
            self._signals_done = self._signals
            end_all()  # an --exec step never outlives the run that started it
            self._end(0, f"stopped by {self._signal_name}")
            if self._signals > 1 and self.summary.exit_code != 3:
                with self._lock:
                    self.summary.exit_code = 128 + self._signum
                    self.summary.reason = (
                        f"aborted by a second {self._signal_name} (a tick still running is abandoned)"
                    )

    def _end(self, code: int, reason: str) -> None:
        """Start no new tick. Safe from any thread and from signal handlers."""
        first = not self._stop.is_set()
        self._stop.set()
        for halted in self._halted.values():
            halted.set()
        if code == 3:
            end_all()
        if first or (code == 3 and self.summary.exit_code != 3):
            self.summary.exit_code = code if code in (2, 3) else _worse(self.summary.exit_code, code)
            self.summary.reason = reason

    def stop(self, code: int, reason: str) -> None:
        """Stop the run as KILL (3), an error or a signal (0) would."""
        self._end(code, reason)


def _worse(a: int, b: int) -> int:
    return worst_exit_code((a, b))
