"""Why a run must not go on: :class:`Stop` (data), and :class:`Stopped`, the one exception that says so.

Every part of heartbeat that stops an agent's run raises the same
:class:`Stopped`: a framework adapter (killed, stuck, over budget), a
:class:`heartbeat.integrations.session.Session` that could not open a heartbeat (killed, a
human awaited, paused, the state folder busy) and what is built on them.
``heartbeat.integrations.session.Stopped`` and ``heartbeat.integrations.Stopped`` are
this class.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

from ..base.errors import HeartbeatError

if TYPE_CHECKING:
    from ..core.models import Anomaly
    from ..core.result import TickResult

__all__ = ["Cause", "Stop", "StopKind", "Stopped", "overruled", "pausing", "stop_of"]

Cause = Literal["killed", "stuck", "budget", "needs_human", "paused", "locked", "error"]
"""Why a run was stopped: the KILL file, a detector, a budget, or what a state folder says."""

StopKind = Cause
"""What stopped the agent (the same words as :data:`Cause`)."""

_EXIT_CODES = {"killed": 3, "needs_human": 4, "paused": 0, "budget": 0, "locked": 5}


@dataclass(frozen=True)
class Stop:
    """Why calls must not go on: the KILL file, a human awaited, a budget, or an unusable state folder."""

    kind: StopKind
    message: str
    exit_code: int


class Stopped(HeartbeatError, RuntimeError):
    """heartbeat stopped an agent run: KILL, stuck, over budget, waiting, or the state folder unusable.

    ``cause`` says which (``stop.kind``); ``reason`` the text; ``anomaly``
    the detector's or the budget's finding (None otherwise); ``exit_code``
    the CLI's code for the same situation (3 killed, 4 a human awaited, 5 the
    state folder busy, 0 paused or over budget (the agent is paused), 1 otherwise); ``stop`` the same as a
    :class:`Stop`. A call that raised it is not in ``state.json``'s history; ``journaled``
    says that it ran all the same and was written to the journal (an action
    event marked ``after_stop``; a model call's ``spend`` event, its spend also
    counted in ``state.json``); ``kept`` says in words what was kept of it.
    """

    def __init__(
        self,
        cause: Cause | Stop,
        reason: str = "",
        anomaly: Anomaly | None = None,
        *,
        journaled: bool = False,
        kept: str = "",
    ) -> None:
        stop = cause if isinstance(cause, Stop) else Stop(cause, reason, _EXIT_CODES.get(cause, 1))
        self.stop = stop
        self.cause: Cause = stop.kind
        self.reason = stop.message
        self.anomaly = anomaly
        self.journaled = journaled
        # A tool call is journaled only; a model call's spend is counted in state.json as well:
        # the Session says which (heartbeat.tick.late.Kept); alone, ``journaled`` says no more.
        self.kept = kept or ("journaled" if journaled else "")
        """What was kept of a call that ran after its heartbeat ended, in words; "" when none ran."""
        self.exit_code = stop.exit_code
        where = f" (the call ran: {self.kept})" if self.kept else ""
        super().__init__(f"heartbeat stopped the run ({stop.kind}): {stop.message}{where}")


def pausing(reason: str) -> Stop:
    """A person's ``heartbeat pause`` under way (``reason``: theirs), as every path says it."""
    return Stop("paused", f"a person is pausing this agent: {reason}", 0)


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


def overruled(hit: Anomaly, result: TickResult | None) -> bool:
    """Whether the end of the heartbeat a call's finding ``hit`` ended (``result``) overruled it:
    the tick ran and its findings, the policy's, do not hold it (the metric rose, a quiet wake-up)."""
    if result is None or result.outcome != "ran":
        return False
    return not any(a.kind == hit.kind and a.action == hit.action for a in result.anomalies)
