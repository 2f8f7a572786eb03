"""What a human does to an agent between ticks: pause, resume, look at its state."""

from __future__ import annotations

from typing import TYPE_CHECKING

from .errors import StateCorrupt
from .models import AgentState, Status

if TYPE_CHECKING:
    from .runner import Heartbeat

__all__ = ["pause", "read_state", "resume"]


def pause(hb: Heartbeat, reason: str | None = None) -> AgentState:
    """Pause the agent: ticks do nothing until resumed."""
    with hb.store.lock():
        state = hb.store.load()
        state.status, state.status_reason = Status.PAUSED, reason or "paused by hand"
        hb.store.save(state)
        hb.journal([{"event": "pause", "reason": state.status_reason}], hb.clock(), state.ticks)
        return state


def resume(hb: Heartbeat, note: str | None = None) -> AgentState:
    """Clear ``needs_human``/``paused``, reset the streak; ``note`` becomes the next instructions."""
    with hb.store.lock():
        now = hb.clock()
        state = hb.store.load()
        previous = state.status
        state.status, state.status_reason = Status.ACTIVE, None
        state.stuck_streak, state.recovery, state.escalation = 0, None, None
        state.instructions = note.strip() if note and note.strip() else None
        hb.store.save(state)
        hb.store.escalation_path.unlink(missing_ok=True)
        hb.journal(
            [{"event": "resume", "from": previous.value, "note": state.instructions}], now, state.ticks
        )
        return state


def read_state(hb: Heartbeat) -> AgentState:
    """The current state, read without the lock (``status``, ``validate``), checked to save again."""
    state = hb.store.load()
    try:
        state.model_dump_json()
    except ValueError as exc:  # e.g. nested deeper than pydantic serialises: no tick could save it
        reason = f"cannot be written back: {str(exc).splitlines()[0]}"
        raise StateCorrupt(hb.store.state_path, reason) from None
    return state
