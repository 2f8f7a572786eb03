"""The core every framework adapter shares: record a tool call, check KILL, say what to do.

A :class:`Guard` sits between a framework's tool hooks and heartbeat. It
records into a *recorder*: the step's :class:`~heartbeat.StepContext` inside
a heartbeat (actions land in ``state.json``, the journal and the detectors
across heartbeats); in a long-running process, a
:class:`heartbeat.integrations.session.Session` on a state folder (the same files, so
KILL, escalation and ``heartbeat status`` work; a path binds one) or a bare
:class:`~heartbeat.Monitor` (detectors only, plus a KILL file if given); or
anything else with the context's ``record`` and ``killed``. It returns a
:class:`Verdict` (data: go, stop or redirect); the adapter carries it out in
its framework's idiom, raising :class:`Stopped` or answering the model with
the verdict's instructions instead of running the tool.

Three rules keep a run from slipping past a verdict. A stop is sticky: once a
guard has stopped a run, every later call is stopped too (a framework that
catches the first exception cannot carry on). A call that tripped a
detector is remembered: the same tool with the same arguments is answered
with the instructions again, never run. And a later call that continues the
stuck pattern with other arguments trips the detector again (the Monitor
reports the finding again, flagged ``again``), so it is redirected too:
every redirection the model reads counts, and ``max_redirects`` ends a run
whose model does not listen, whatever it varies. A redirection the model never
reads (its run ended first, or a cancelled call's) is not counted: an adapter
that can tell passes ``read_later=True`` and calls :meth:`Guard.delivered` once
a model request carries it.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, TypeVar, overload

from ..base.errors import HeartbeatError
from ..state.killswitch import stopped_by
from .recorders import MonitorRecorder, Recorder, as_recorder
from .redirects import call_key, redirect_text
from .stops import Cause, Stopped, pausing

if TYPE_CHECKING:
    from ..core.models import Anomaly

__all__ = [
    "GO",
    "Guard",
    "MonitorRecorder",
    "OnStuck",
    "Recorder",
    "Stopped",
    "Verdict",
    "as_recorder",
    "redirect_text",
]

OnStuck = Literal["stop", "redirect"]

_S = TypeVar("_S", bound=Stopped)
_R = TypeVar("_R")


@dataclass(frozen=True, slots=True)
class Verdict:
    """What an adapter does with a tool call: go on, stop the run, or answer with instructions."""

    action: Literal["go", "stop", "redirect"]
    cause: Cause | None = None
    reason: str = ""
    anomaly: Anomaly | None = None
    instructions: str | None = None
    journaled: bool = False
    """A stop for a call that ran after its heartbeat ended: the Session wrote it to the journal."""
    kept: str = ""
    """What the Session kept of such a call, in words (:attr:`Stopped.kept`)."""

    @overload
    def error(self) -> Stopped: ...

    @overload
    def error(self, kind: type[_S]) -> _S: ...

    def error(self, kind: type[Stopped] = Stopped) -> Stopped:
        """The exception that stops the run (for a ``stop`` verdict), as ``kind`` (a framework's own)."""
        return kind(
            self.cause or "stuck", self.reason, self.anomaly, journaled=self.journaled, kept=self.kept
        )


GO = Verdict("go")
"""The verdict of a healthy call (one shared object: the common case allocates nothing)."""


def _text(value: object) -> str | None:
    if value is None:
        return None
    return value if value.__class__ is str else str(value)


class Guard:
    """Records a framework's tool calls and decides, call by call, whether the run goes on.

    ``target`` is the step's StepContext, a :class:`heartbeat.integrations.session.Session`
    or a path to a state folder or ``heartbeat.toml`` (opened as a Session;
    :meth:`close` ends its heartbeat), a Monitor (with ``kill_file``) or
    another :class:`Recorder`. ``on_stuck``: ``"stop"`` ends the run when a
    detector fires; ``"redirect"`` answers the model with recovery
    instructions instead, and stops the run after ``max_redirects``
    redirections (the model is not listening). KILL, the fleet stop, a
    person's pause and an exhausted budget always stop. Bound to a
    StepContext or Session of an agent in observe mode (``[policy] mode =
    "observe"``) a finding is recorded and nothing more.
    Safe to share between threads (parallel tool calls).
    """

    def __init__(
        self,
        target: object,
        *,
        on_stuck: OnStuck = "stop",
        max_redirects: int = 3,
        kill_file: str | Path | None = None,
    ) -> None:
        if on_stuck not in ("stop", "redirect"):
            raise ValueError(f"on_stuck must be 'stop' or 'redirect', not {on_stuck!r}")
        if isinstance(max_redirects, bool) or not isinstance(max_redirects, int) or max_redirects < 1:
            raise ValueError(f"max_redirects must be an int >= 1, not {max_redirects!r}")
        self.recorder = as_recorder(target, kill_file=kill_file)
        self.on_stuck: OnStuck = on_stuck
        self.max_redirects = max_redirects
        self.anomalies: list[Anomaly] = []
        self.redirects = 0
        self.stopped: Stopped | None = None
        self._blocked: dict[tuple[str, str], Anomaly] = {}  # calls that tripped a detector
        self._lock = threading.Lock()
        # A Session's check(): opens a heartbeat, or says why calls must not go on.
        check = getattr(self.recorder, "check", None)
        self._check: Callable[[], Any] | None = check if callable(check) else None
        self._budgeted = hasattr(self.recorder, "budget_anomaly")  # looked up once, not per call
        # A StepContext's: the calls let run until recorded, journaled if its step is abandoned.
        self._flying = _hooks(self.recorder, "began", "ended")
        self._sent = _hooks(self.recorder, "model_began", "model_ended")  # model calls, likewise
        if hasattr(self.recorder, "model_run"):  # a StepContext: a model's run goes through it now
            self.recorder.model_run = True
        pause = getattr(self.recorder, "pause_requested", None)  # a StepContext's: a person waits
        self._pausing: Callable[[], object] | None = pause if callable(pause) else None
        usage = getattr(self.recorder, "record_usage", None)
        self._record_usage: Callable[..., Anomaly | None] | None = usage if callable(usage) else None
        self._owned = isinstance(target, str | Path)  # a Session we opened: close() ends it
        self._waits = hasattr(type(self.recorder), "answers_at_once")  # a Session: its calls may wait
        self.observing = getattr(self.recorder, "observing", False) is True
        """``[policy] mode = "observe"`` (a StepContext's or Session's): detectors never redirect or stop."""

    @classmethod
    def of(
        cls,
        target: object,
        *,
        on_stuck: OnStuck = "stop",
        max_redirects: int = 3,
        kill_file: str | Path | None = None,
    ) -> Guard:
        """``target`` itself when it is a Guard, else a Guard over it with these options."""
        if isinstance(target, Guard):
            return target
        return cls(target, on_stuck=on_stuck, max_redirects=max_redirects, kill_file=kill_file)

    def close(self) -> None:
        """End the open heartbeat of a Session this guard opened from a path (saved, journaled)."""
        close = getattr(self.recorder, "close", None)
        if self._owned and callable(close):
            close()

    def __enter__(self) -> Guard:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return (
            f"Guard({self.recorder!r}, on_stuck={self.on_stuck!r}, redirects={self.redirects}, "
            f"stopped={self.stopped is not None})"
        )

    def before(
        self, tool: str, args: Mapping[str, Any] | None = None, *, read_later: bool = False
    ) -> Verdict:
        """Whether a tool call may run: stop (killed, already stopped), redirect (tripped before) or go.

        ``read_later``: a redirect is counted toward ``max_redirects`` only when the adapter says the
        model read it (:meth:`delivered`), not here.
        """
        if self.stopped is not None:
            return Verdict("stop", self.stopped.cause, self.stopped.reason, self.stopped.anomaly)
        if self._check is not None:
            stop = self._check()  # a Session: KILL, a human awaited, the folder busy; opens a heartbeat
            if stop is not None:
                return self._stop(stop.kind, stop.message, None)
        elif (standing := self._standing()) is not None:
            return standing
        spent: Anomaly | None = getattr(self.recorder, "budget_anomaly", None) if self._budgeted else None
        if spent is not None:  # a StepContext past a limit (by this guard's calls or the step's own)
            return self._stop("budget", spent.message, spent)
        if self._blocked:
            earlier = self._blocked.get(call_key(tool, args))
            if earlier is not None:
                with self._lock:
                    refused = self._refused(tool, args)
                    if refused is not None:
                        return refused
                    return self._redirect(earlier, tool, again=True, read_later=read_later)
        if self._flying is not None:
            with self._lock:  # parallel calls: one count each
                self._flying[0](call_key(tool, args), tool, args)
        return GO

    def _refused(self, tool: str, args: Mapping[str, Any] | None) -> Verdict | None:
        """Record a call refused before it ran, asked again after a redirection, as a failure whose
        error says it never ran: the stretch stays stuck as the journal shows it (a heartbeat of
        refusals alone was quiet, and two of them cleared the recovery); a stop when the policy
        called a human at once."""
        from ..core.models import REFUSED  # only here: a cold import of the guard stays light

        try:
            anomaly = self.recorder.record(tool, args, error=REFUSED)
        except HeartbeatError as exc:
            stop = getattr(exc, "stop", None)  # a Session that could not open a heartbeat
            if stop is None:
                raise
            return self._stop(stop.kind, stop.message, None)  # it never ran: nothing kept
        if anomaly is None:
            return None
        self.anomalies.append(anomaly)
        return self._waiting(anomaly)

    @property
    def waits(self) -> bool:
        """Whether a check or a record may wait on files, locks or the fleet stop (bound to a Session)."""
        return self._waits

    async def offload(self, call: Callable[[], _R], *, records: bool = False) -> _R:
        """``call()``, one of this guard's methods, from a coroutine (an adapter's hook on an event loop).

        Bound to a Session, a check may open a heartbeat (the lock, up to ``lock_wait``) or read the
        fleet stop for the first time (up to its deadline), and a record (``records``) may end the
        heartbeat (saved, notified): those run on a worker thread, so the loop is never held and
        the rest of the process goes on. Otherwise (and for a check a Session answers at once) it
        is called here: a worker thread costs more than the call.
        """
        if self._waits and (records or not getattr(self.recorder, "answers_at_once", False)):
            import anyio.to_thread  # only here: a cold import of the guard stays light

            return await anyio.to_thread.run_sync(call)
        return call()

    def check(self) -> Verdict:
        """Whether the run may go on at all (before a model call): stop when killed, stopped, over budget."""
        if self.stopped is not None:
            return Verdict("stop", self.stopped.cause, self.stopped.reason, self.stopped.anomaly)
        if self._check is not None:
            # A Session says which stop it is (KILL, the fleet stop, a human awaited) and journals it.
            known = getattr(self.recorder, "stopped", None)
            if known is not None:
                return self._stop(known.kind, known.message, None)
        elif (standing := self._standing()) is not None:
            return standing
        spent: Anomaly | None = getattr(self.recorder, "budget_anomaly", None) if self._budgeted else None
        if spent is not None:  # a StepContext past a limit (by this guard's calls or the step's own)
            return self._stop("budget", spent.message, spent)
        return GO

    def model_began(self, key: object, model: str | None) -> None:
        """A model call ``key`` (to ``model``) is let go: a StepContext journals it if its step is
        abandoned before :meth:`model_ended` (paid for, its tokens unknown)."""
        if self._sent is not None:
            self._sent[0](key, model or "an unnamed model")

    def model_ended(self, key: object) -> None:
        """The model call ``key`` answered or failed (its tokens, if any, go to :meth:`usage`)."""
        if self._sent is not None:
            self._sent[1](key)

    def usage(
        self,
        model: str,
        input_tokens: int = 0,
        output_tokens: int = 0,
        cached_tokens: int = 0,
        *,
        cost: float | None = None,
    ) -> Verdict:
        """Record one model call's tokens (spend, never seen by the detectors); stop once over budget.

        A recorder without ``record_usage`` (a bare custom one) ignores it.
        Called after the model call: the next model or tool call is the one
        stopped, so a run overspends by one call at most.
        """
        if self._record_usage is None:
            return GO
        with self._lock:
            try:
                spent = self._record_usage(model, input_tokens, output_tokens, cached_tokens, cost=cost)
            except HeartbeatError as exc:
                stop = getattr(exc, "stop", None)  # a Session that could not open a heartbeat
                if stop is None:
                    raise
                # The call was paid for all the same: the Session says whether it counted it.
                return self._stop(stop.kind, stop.message, None, ran=exc)
            if spent is None:
                return GO
            self.anomalies.append(spent)
            return self._stop("budget", spent.message, spent)

    def after(
        self,
        tool: str,
        args: Mapping[str, Any] | None = None,
        *,
        output: object = None,
        error: str | BaseException | None = None,
        cost: float = 0.0,
        read_later: bool = False,
    ) -> Verdict:
        """Record a finished tool call; the verdict for its result (and the run); ``read_later`` as
        for :meth:`before`."""
        if isinstance(error, BaseException):
            error = f"{type(error).__name__}: {error}"
        with self._lock:  # the recorder checks cost and the rest, as ctx.record does
            if self._flying is not None:
                self._flying[1](call_key(tool, args))
            try:
                anomaly = self.recorder.record(tool, args, output=_text(output), error=error, cost=cost)
            except HeartbeatError as exc:
                stop = getattr(exc, "stop", None)  # a Session that could not open a heartbeat
                if stop is None:
                    raise
                # The call ran all the same: the Session says whether its journal holds it.
                return self._stop(stop.kind, stop.message, None, ran=exc)
            if anomaly is None:
                return GO
            self.anomalies.append(anomaly)
            if anomaly.kind == "budget":
                return self._stop("budget", anomaly.message, anomaly)
            if self.observing:  # observe mode: found and journaled; the model sees what it would anyway
                return GO
            waiting = self._waiting(anomaly)  # a Session's policy may have escalated at once
            if waiting is not None:
                return waiting
            self._blocked[call_key(tool, args)] = anomaly
            return self._redirect(anomaly, tool, again=False, read_later=read_later, failed=error)

    def delivered(self, count: int = 1) -> None:
        """Count ``count`` redirections a model request now carries to the model (see ``read_later``)."""
        with self._lock:
            self.redirects += count

    def cancelled(self, tool: str, args: Mapping[str, Any] | None, exc: BaseException) -> None:
        """Record a call cancelled while it ran (``exc``: a sibling call's failure or a stop ended
        the run, or the caller gave up): it may have acted, so it is a failed call all the same. The
        run is ending: the verdict is kept (a stop stays sticky) and nothing is said to the model, so
        a redirection is not counted."""
        why = f"cancelled while running (it may have run): {type(exc).__name__}"
        self.after(tool, args, error=why, read_later=True)

    def _redirect(
        self, anomaly: Anomaly, tool: str, *, again: bool, read_later: bool, failed: str | None = None
    ) -> Verdict:
        """Redirect (or stop, in stop mode or once the model has ignored enough redirections it read)."""
        reason = f"{anomaly.kind}: {anomaly.message}"
        if again:  # the model's tool name reaches a person in the stop's message: masked, escaped
            from ..base.credential_text import mask_name  # only here: a cold import of the guard stays light
            from ..core.models import printable

            reason = f"called {printable(mask_name(tool))} again after being told not to; {reason}"
        if self.on_stuck == "stop" or self.redirects >= self.max_redirects:
            if self.on_stuck == "redirect":
                reason = f"{self.redirects} redirection(s) ignored; {reason}"
            return self._stop("stuck", reason, anomaly)
        if not read_later:  # the adapter's answer reaches the model as it returns
            self.redirects += 1
        # Asked again (``again``: from before), the call was refused before it ran; else it ran (and
        # ``failed``: ended with that error, no result).
        text = redirect_text(anomaly, tool, ran=not again, failed=failed)
        return Verdict("redirect", "stuck", reason, anomaly, text)

    def _waiting(self, anomaly: Anomaly) -> Verdict | None:
        """After an anomaly: a stop when a Session's policy escalated (or paused) at once, else None."""
        if self._check is None:
            return None
        last = getattr(self.recorder, "last", None)  # the heartbeat the anomaly just ended
        outcome = getattr(last, "outcome", None)
        if outcome not in ("needs_human", "paused"):
            return None
        return self._stop(outcome, str(getattr(last, "message", outcome)).splitlines()[0], anomaly)

    def _stop(
        self, cause: Cause, reason: str, anomaly: Anomaly | None, *, ran: HeartbeatError | None = None
    ) -> Verdict:
        """Stop the run (sticky); ``ran``: the Session's error for a call that ran all the same."""
        # The sticky stop that later calls get is built from ``self.stopped`` without ``journaled``:
        # those calls never ran.
        said = ran if isinstance(ran, Stopped) else None
        journaled, kept = (said.journaled, said.kept) if said is not None else (False, "")
        verdict = Verdict("stop", cause, reason, anomaly, journaled=journaled, kept=kept)
        self.stopped = verdict.error()
        return verdict

    def _standing(self) -> Verdict | None:
        """A StepContext's or MonitorRecorder's stop: KILL or the fleet stop, or a person's pause
        that waits for the step's tick (the run stops, the tick ends, the pause gets in)."""
        if self.recorder.killed:
            return self._stop("killed", self._kill_reason(), None)
        asked = self._pausing() if self._pausing is not None else None
        if isinstance(asked, str):
            stop = pausing(asked)
            return self._stop(stop.kind, stop.message, None)
        return None

    def _kill_reason(self) -> str:
        """Why a StepContext or MonitorRecorder is stopped, as every part says it (the switch named)."""
        said = getattr(self.recorder, "stopped_by", None)  # the KILL file, or a StepContext's fleet stop
        if callable(said) and isinstance(text := said(), str):
            return text
        # A recorder of the caller's own says only that it is killed (Recorder.killed: a KILL file).
        return stopped_by("the KILL file", "its recorder says the agent is killed")


def _hooks(recorder: object, start: str, end: str) -> tuple[Callable[..., Any], Callable[..., Any]] | None:
    """A recorder's pair of methods ``start`` and ``end`` (a StepContext's), or None when it lacks one."""
    first, second = getattr(recorder, start, None), getattr(recorder, end, None)
    return (first, second) if callable(first) and callable(second) else None
