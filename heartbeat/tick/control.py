"""What a human does to an agent between ticks: pause, resume (and the command for it), look at its state."""

from __future__ import annotations

import contextlib
import os
import stat
import time
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any

from ..base.credential_text import mask_credential_text
from ..base.errors import ChangedMeanwhile, HeartbeatError, StateCorrupt
from ..config.flags import addressed
from ..core.models import AgentState, Status
from ..state.killswitch import REASON_LIMIT, fleet_stop_name, reason_text, stopped_by

if TYPE_CHECKING:
    from datetime import datetime
    from pathlib import Path

    from ..config.file import HeartbeatConfig
    from ..core.delivery import DeliveryReport
    from ..core.result import TickResult
    from .agent import Agent

__all__ = [
    "HUMAN_LOCK_WAIT",
    "interrupted_message",
    "journal_interrupted",
    "kill_ends_delivery",
    "killed",
    "killed_while_loading",
    "let_pause_in",
    "note_interrupted",
    "note_left_behind",
    "note_stopped_between_ticks",
    "pause",
    "pause_requested",
    "pending_note",
    "read_state",
    "resume",
    "resume_command",
    "stopped_before_lock",
    "watch_stops",
]

# How long `pause` and `resume` wait for a tick that holds the lock (one finishing its
# deliveries, say) before they give up with exit 5: a human should not have to retry.
HUMAN_LOCK_WAIT = 15.0

# Written by `pause` while it waits for the lock, so a long-running Session that holds it (a busy
# MCP proxy) ends its heartbeat and lets the human in; removed once the pause is saved. One left
# by a pause that was SIGKILLed is ignored once older than any pause waits.
PAUSE_REQUEST_FILE = ".pause-request"
_PAUSE_REQUEST_STALE = HUMAN_LOCK_WAIT + 5.0
_PAUSED_BY_HAND = "paused by hand"


def _typed(text: str | None) -> str | None:
    """Text a person typed, as it can be saved: bytes that were not UTF-8 become U+FFFD.

    A terminal in Latin-1 hands Python ``café`` as ``caf\\udce9`` (a lone
    surrogate), which no JSON file can hold: refusing the note would leave the
    agent waiting for a human who cannot resume it.
    """
    if text is None:
        return None
    try:
        return text.encode("utf-8", "surrogateescape").decode("utf-8", "replace")
    except UnicodeEncodeError:  # a surrogate no terminal gives (a library caller's): replaced as well
        return text.encode("utf-8", "replace").decode("utf-8")


def _journal(hb: Agent, events: list[dict[str, Any]], now: datetime, tick: int) -> str | None:
    """Journal a human's act after its state is saved; what went wrong, or None.

    The act stands (the state is the durable record), so a journal that cannot
    be written (a FIFO, a folder in its place) is said once the act is done.
    """
    try:
        hb.journal(events, now, tick)
    except OSError as exc:
        return (
            f"the journal could not be written ({hb.redact(exc.strerror or str(exc))}); the state was saved"
        )
    return None


def pause(hb: Agent, reason: str | None = None) -> AgentState:
    """Pause the agent: ticks do nothing until resumed (waits a little for a running tick).

    While it waits, a request file tells a Session holding the lock to end its heartbeat.
    """
    # Said as a KILL file's reason is (one line, masked, escaped, cut): status, log and notifications show it.
    text = reason_text((_typed(reason) or "").encode(), _PAUSED_BY_HAND)
    request = _ask_for_pause(hb, text)
    try:
        with hb.store.lock(timeout=HUMAN_LOCK_WAIT):
            state = hb.store.load()
            state.status, state.status_reason = Status.PAUSED, text
            hb.store.save(state)
            problem = _journal(
                hb, [{"event": "pause", "reason": state.status_reason}], hb.clock(), state.ticks
            )
    finally:
        if request is not None:
            with contextlib.suppress(OSError):
                os.unlink(request)
    if problem:
        raise HeartbeatError(f"{hb.name}: paused, but {problem}")
    return state


def _ask_for_pause(hb: Agent, reason: str) -> str | None:
    """Write the pause request (its reason); its path, or None when it could not be written."""
    path = os.path.join(hb.state_dir, PAUSE_REQUEST_FILE)
    try:  # no folder yet: nothing can hold its lock, and a pause creates no folder of its own
        descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o600)
    except OSError:  # the pause still waits for the lock as it always did
        return None
    with os.fdopen(descriptor, "wb") as handle:
        handle.write(reason.encode("utf-8", "replace"))
    return path


def pause_requested(hb: Agent) -> str | None:
    """The reason of a ``heartbeat pause`` that waits for the lock now, else None (one stat).

    Anything that can write the state folder can write the request (the agent too): its text is
    read as a KILL file's is (:func:`~heartbeat.state.killswitch.reason_text`).
    """
    path = os.path.join(hb.state_dir, PAUSE_REQUEST_FILE)
    try:
        info = os.lstat(path)
    except OSError:
        return None
    if time.time() - info.st_mtime > _PAUSE_REQUEST_STALE:
        return None  # left by a pause that was killed while it waited
    if not stat.S_ISREG(info.st_mode):  # never opened: a FIFO would block
        return _PAUSED_BY_HAND
    try:
        with open(path, "rb") as handle:
            raw = handle.read(REASON_LIMIT * 4)
    except OSError:
        raw = b""
    return reason_text(raw, _PAUSED_BY_HAND)


def let_pause_in(hb: Agent, poll: float = 0.02) -> None:
    """Before a tick takes the lock: wait while a ``heartbeat pause`` waits for it (its request is
    there), so that a run whose ticks come back to back (a step longer than its schedule) lets the
    human in between two of them; never past a KILL, nor longer than a pause waits."""
    deadline = time.monotonic() + _PAUSE_REQUEST_STALE
    while pause_requested(hb) is not None and hb.kill.reason() is None and time.monotonic() < deadline:
        time.sleep(poll)


def resume(hb: Agent, note: str | None = None, *, seen: Status | None = None) -> AgentState:
    """Clear ``needs_human``/``paused``, reset the streak; ``note`` becomes the next instructions.

    Without a ``note``, a human's note that no step has read yet (left by an
    earlier ``resume --note``) is kept: a pause and resume for maintenance must
    not drop it. An empty ``note`` clears it. Recovery instructions are cleared.
    ``seen``: the status the human saw; when a tick the resume waited for left
    the agent waiting for a human otherwise (an escalation they were not shown),
    nothing is changed (:class:`~heartbeat.base.errors.ChangedMeanwhile`).
    """
    with hb.store.lock(timeout=HUMAN_LOCK_WAIT):
        now = hb.clock()
        state = hb.store.load()
        previous = state.status
        if seen is not None and previous not in (seen, Status.ACTIVE):
            read = (
                f"read {hb.store.escalation_path}"
                if previous is Status.NEEDS_HUMAN
                else "see `heartbeat status`"
            )
            raise ChangedMeanwhile(
                f"{hb.name}: not resumed: while resume waited for the running tick, the agent came to wait"
                f" for a human ({previous.value}, tick {state.ticks}); {read}, then run resume again;"
                " nothing was changed"
            )
        pending = pending_note(state)
        state.status, state.status_reason = Status.ACTIVE, None
        state.stuck_streak, state.recovery, state.escalation = 0, None, None
        note = _typed(note)
        if note is None:
            state.instructions = pending
        else:
            # A person's text for the next step: its line breaks stay (shown indented, escaped),
            # but a key pasted into it is masked before state.json, the journal or status keep it.
            state.instructions = mask_credential_text(note.strip()) or None
        # A fresh progress window: the flat samples before the human's note must not make the
        # very next tick say "reassess your goal" over the note.
        state.progress = []
        # A human acted: pages about the status just cleared must not arrive after this.
        # They are journaled as settled first, so a crash half-way repeats, never hides, one.
        from ..notify import outbox as outboxes

        settled = {n.key for n in state.notices if n.kind in outboxes.STATUS_KINDS}
        state.notices = [n for n in state.notices if n.kind not in outboxes.STATUS_KINDS]
        outbox = hb.outbox() if hb.outbox_waiting() else None
        # The delivery lock is held from the listing to the removal, so no delivery sends or writes
        # back a page in between; a delivery that keeps it past the wait leaves its pages where they
        # are, said as such (the resume itself stands: the human's act is not refused for a webhook).
        delivery = outbox.lock(outboxes.SETTLE_WAIT) if outbox is not None else contextlib.nullcontext(False)
        with delivery as held:
            keys = outbox.settle(hb.name, dry_run=True) if outbox is not None else []
            unsettled = [] if held else keys
            settled.update(keys if held else ())
            hb.store.save(state)
            event: dict[str, Any] = {
                "event": "resume",
                "from": previous.value,
                "note": state.instructions,
                "settled": sorted(settled),
            }
            if unsettled:
                event["unsettled"] = unsettled
            problem = _journal(hb, [event], now, state.ticks)
            hb.store.escalation_path.unlink(missing_ok=True)
            if outbox is not None and held:
                outbox.settle(hb.name, held=True)
    if unsettled:
        busy = (
            f"the outbox's delivery lock could not be had within {outboxes.SETTLE_WAIT:g} s (a delivery"
            f" is running), so these pages stay in outbox/ and may still be sent: {', '.join(unsettled)}"
            " (`heartbeat outbox drop KEY` removes one)"
        )
        problem = f"{problem}; and {busy}" if problem else busy
    if problem:
        raise HeartbeatError(f"{hb.name}: resumed, but {problem}")
    return state


def resume_command(config: HeartbeatConfig, agent: str, state_dir: Path) -> str:
    """``heartbeat resume --note ...`` for ``agent``, to be run from any folder (see :func:`addressed`)."""
    return addressed('resume --note "what to do differently"', config, agent, state_dir)


def pending_note(state: AgentState) -> str | None:
    """A human's resume note that no step has read yet, else None.

    Instructions with no recovery under way come from a human: the policy's
    recovery instructions always come with a recovery, and the first step
    after a note clears or replaces it.
    """
    return state.instructions if state.instructions and state.recovery is None else None


def read_state(hb: Agent) -> AgentState:
    """The current state, read without the lock (``status``, ``validate``), checked to save again."""
    state = hb.store.load()
    try:
        state.model_dump_json()
    except ValueError as exc:  # e.g. nested deeper than pydantic serialises: no tick could save it
        reason = f"cannot be written back: {str(exc).splitlines()[0]}"
        raise StateCorrupt(hb.store.state_path, reason) from None
    return state


def killed(hb: Agent, reason: str, *, locked: bool, source: str | None = None) -> TickResult:
    """Stop: journal the kill when the lock can be had, never call the step. KILL wins (exit 3)."""
    from ..core.result import TickResult

    result = TickResult(hb.name, "killed", 3, stopped_by(source or hb.kill.name, reason))
    event = [{"event": "kill", "reason": reason, "by": source or hb.kill.name}]
    try:
        with contextlib.nullcontext() if locked else hb.store.lock():
            hb.journal(event, hb.clock(), 0)
    except (HeartbeatError, OSError) as exc:
        # Busy or a broken state folder: the kill still holds; only its journal line is missing.
        result.message += f" (not journaled: {hb.redact(str(exc))})"
    return result


def stopped_before_lock(hb: Agent) -> TickResult | None:
    """A tick's first look: KILL, then the fleet stop (``[stop]``), read fresh inside the KILL watch
    (a slow stop URL never holds up a KILL). The tick's result if either says stop, else None."""
    reason = hb.kill.reason()
    if reason is not None:
        return killed(hb, reason, locked=False)
    fleet = hb.shared_stop
    if fleet is None:
        return None
    from .sharedstop import KilledWhileReading

    try:
        shared = fleet.reason(killed=hb.kill.reason)
    except KilledWhileReading as exc:
        return killed(hb, exc.reason, locked=False)
    return None if shared is None else killed(hb, shared, locked=False, source=fleet_stop_name(fleet.where))


def watch_stops(hb: Agent, on_stop: Callable[[str, str], None]) -> list[int]:
    """Watch KILL and the fleet stop (read at most once a second: it may be a URL) while a step or a
    delivery runs: ``on_stop(reason, by)`` when either says stop (``by`` as :func:`stopped_by` names
    it). The watches' tokens, for :func:`~.watchdog.unwatch`."""
    from .watchdog import watch  # a tick that neither steps nor delivers never loads it

    tokens = [watch(hb.kill, lambda reason: on_stop(reason, hb.kill.name))]
    fleet = hb.shared_stop
    if fleet is not None:
        by = fleet_stop_name(fleet.where)
        tokens.append(watch(fleet.polled(), lambda reason: on_stop(reason, by)))
    return tokens


@contextlib.contextmanager
def kill_ends_delivery(hb: Agent) -> Iterator[None]:
    """While a tick delivers: KILL or the fleet stop ends it through ``hb.on_abandon``, exit 3 (set by
    ``tick`` and ``run``).

    A webhook that never answers must not hold a stop off for its timeout; the
    notices were queued before delivery began, so what was not delivered waits
    in outbox/ for the next tick, and a saved tick's journal is made whole. Without
    ``on_abandon`` (a library caller's tick, a human's command) delivery runs to its own timeouts.
    """
    on_abandon = hb.on_abandon
    if on_abandon is None:
        yield
        return
    from ..core.result import TickResult
    from .watchdog import unwatch

    def stop(reason: str, by: str) -> None:
        _close_delivery(hb)
        _journal_unlocked(hb, {"event": "kill", "reason": reason, "by": by, "during_delivery": True})
        message = stopped_by(by, reason, " during delivery")
        message += "; what was not delivered waits in outbox/"
        on_abandon(TickResult(hb.name, "killed", 3, message))

    tokens = watch_stops(hb, stop)
    try:
        yield
    finally:
        for token in tokens:
            unwatch(token)


def killed_while_loading(hb: Agent, reason: str) -> None:
    """KILL while ``run`` loaded the agent's step (watchdog thread): journal it, end the process, exit 3.

    Loading runs the agent's module-level code, which may hang; only ending the process stops it.
    """
    from .watchdog import exit_now

    result = killed(hb, reason, locked=False)
    exit_now(3, f"heartbeat: [{hb.name}] {result.message} (while its step was loading)")


def note_left_behind(hb: Agent, reason: str) -> None:
    """Journal that ``run`` ended while ``hb``'s tick was still running (no lock: an emergency);
    one that was delivering its notices was saved: its last journal lines first."""
    _close_delivery(hb)
    _journal_unlocked(
        hb, {"event": "kill", "reason": reason, "abandoned": True, "note": "the tick was left running"}
    )


def note_stopped_between_ticks(hb: Agent, reason: str, by: str) -> None:
    """Journal that KILL or the fleet stop (``by``, as :func:`stopped_by` names it) stopped ``run``
    while ``hb`` waited for its next tick (no lock: the run exits within half a second)."""
    _journal_unlocked(hb, {"event": "kill", "reason": reason, "by": by, "between_ticks": True})


def note_delivery_between_ticks(hb: Agent, report: DeliveryReport) -> None:
    """Journal what a delivery outside any tick did (``run``'s outbox watch, ``outbox retry``), as a
    tick journals its own: a notification sent later is in the log too (no lock: one append)."""
    undelivered = report.undelivered()
    if report.delivered or undelivered:
        event = {"event": "delivery", "delivered": report.delivered, "undelivered": undelivered}
        _journal_unlocked(hb, {**event, "waiting": report.waiting, "between_ticks": True})


def journal_interrupted(hb: Agent, reason: str) -> None:
    """SIGTERM/SIGINT ended ``hb``'s tick: journal it when the lock can be had. Its step is gone (an
    ``--exec`` group ended), its work unsaved; or it was stopped while it delivered, saved: its
    last journal lines (``hb.delivering``) are written first."""
    event: dict[str, Any] = {"event": "interrupted", "reason": reason}
    if _close_delivery(hb):  # saved, its lock let go (a pause may hold it now): written as they come
        _journal_unlocked(hb, event | {"during_delivery": True})
        return
    with contextlib.suppress(HeartbeatError, OSError), hb.store.lock():
        hb.journal([event], hb.clock(), 0)


def interrupted_message(hb: Agent | None, reason: str) -> str:
    """What a tick ended by SIGTERM or SIGINT (``reason``) kept, in words: none of its work, or
    (stopped while it delivered its notices) all of it, what was not delivered waiting in outbox/."""
    if hb is not None and hb.delivering is not None:
        kept = "the tick was saved and journaled; what was not delivered waits in outbox/"
        return f"{reason} during delivery; {kept}"
    return f"{reason}; the tick's work was not saved"


def note_interrupted(hb: Agent, reason: str) -> None:
    """Journal that a signal ended ``hb``'s tick whose step (or delivery) did not unwind (no lock:
    an emergency); one that was delivering its notices was saved: its last journal lines first."""
    delivering = _close_delivery(hb)
    what = "the delivery" if delivering else "the step"
    event = {"event": "interrupted", "reason": reason, "abandoned": True, "note": f"{what} did not unwind"}
    _journal_unlocked(hb, event | ({"during_delivery": True} if delivering else {}))


def _close_delivery(hb: Agent) -> bool:
    """Whether ``hb``'s tick was delivering its notices when it was stopped: saved, so its last
    journal lines (``hb.delivering``) are written now (once, whoever asks first)."""
    closing = hb.delivering
    if closing is None:
        return False
    with contextlib.suppress(HeartbeatError, OSError):
        closing()
    return True


def _journal_unlocked(hb: Agent, event: dict[str, Any]) -> None:
    """Journal one event in an emergency, without the lock, whatever goes wrong.

    The tick's thread holds the lock and is stuck (or waits); one O_APPEND write cannot tear its lines.
    """
    with contextlib.suppress(HeartbeatError, OSError):
        hb.journal([event], hb.clock(), 0)
