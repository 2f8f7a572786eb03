"""Why a long-running process must not go on: :class:`Stop`, and :class:`Stopped` when it tried."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

from ..base.errors import HeartbeatError

if TYPE_CHECKING:
    from ..core.result import TickResult

__all__ = ["Stop", "StopKind", "Stopped", "stop_of"]

StopKind = Literal["killed", "needs_human", "paused", "locked", "error"]
"""What stopped the agent."""


@dataclass(frozen=True)
class Stop:
    """Why calls must not go on: the KILL file, a human awaited, or a state folder that cannot be used."""

    kind: StopKind
    message: str
    exit_code: int


class Stopped(HeartbeatError, RuntimeError):
    """``Session.record`` could not open a heartbeat: the action is not recorded."""

    def __init__(self, stop: Stop) -> None:
        super().__init__(f"not recorded: {stop.message}")
        self.stop = stop
        self.exit_code = stop.exit_code


def stop_of(result: TickResult) -> Stop | None:
    """Why a finished tick means the agent must not go on, else None."""
    outcome = result.outcome
    if outcome == "ran":
        return None
    if outcome == "paused":
        return Stop("paused", result.message, 0)
    if outcome == "needs_human":
        return Stop("needs_human", result.message, 4)
    if outcome == "killed":
        return Stop("killed", result.message, 3)
    if outcome == "locked":
        return Stop("locked", result.message, 5)
    return Stop("error", result.message, result.exit_code)
