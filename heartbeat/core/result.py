"""What one heartbeat did: :class:`TickResult`, printed by the CLI and recorded by the journal."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

from ..base.errors import EXIT_CODES, worst_exit_code
from .models import Anomaly, Decision

if TYPE_CHECKING:
    from .delivery import DeliveryReport
    from .settle import Settlement, TickFacts

__all__ = ["Outcome", "TickResult"]

Outcome = Literal["ran", "killed", "locked", "paused", "needs_human", "error"]


@dataclass
class TickResult:
    """What one heartbeat did; the CLI prints it and the journal records it."""

    agent: str
    outcome: Outcome
    exit_code: int
    message: str
    tick: int | None = None
    actions: int = 0
    failed: int = 0
    first_error: str | None = None
    progress: float | None = None
    progress_error: str | None = None
    anomalies: list[Anomaly] = field(default_factory=list)
    decision: Decision | None = None
    step_error: str | None = None
    delivered: list[str] = field(default_factory=list)
    undelivered: list[str] = field(default_factory=list)
    waiting: int = 0
    untold: bool = False
    """This tick escalated and no notifier is configured: nobody was told but ``ESCALATION.md``."""
    turn: bool = False
    """The heartbeat was a live agent's next model turn (see :attr:`.settle.TickFacts.turn`)."""
    heard: bool = True
    """A recovery could reach the agent (see :attr:`.settle.TickFacts.heard`)."""
    baseline: float | None = None
    """The metric before the step (see :attr:`.settle.TickFacts.baseline`); the journal keeps it."""
    errors: list[str] = field(default_factory=list)
    """What went wrong beside the tick's outcome, one line each (see :meth:`add_error`)."""

    def to_json(self) -> dict[str, Any]:
        """A JSON-able dict, stable for scripts (``heartbeat tick --json``)."""
        return {
            "agent": self.agent,
            "outcome": self.outcome,
            "exit_code": self.exit_code,
            "message": self.message,
            "tick": self.tick,
            "actions": self.actions,
            "failed_actions": self.failed,
            "progress": self.progress,
            "progress_error": self.progress_error,
            "anomalies": [{**a.model_dump(mode="json"), "at": a.at.isoformat()} for a in self.anomalies],
            "decision": self.decision.model_dump(mode="json") if self.decision else None,
            "step_error": self.step_error,
            "notifications": {
                "delivered": self.delivered,
                "undelivered": self.undelivered,
                "waiting": self.waiting,
            },
        }

    def absorb(self, report: DeliveryReport) -> None:
        """Take what a delivery pass did into this result."""
        self.delivered += report.delivered
        self.undelivered += report.undelivered()
        self.waiting = report.waiting

    def add_error(self, line: str) -> None:
        """Something went wrong that the outcome does not say (the journal could not be written):
        exit 2, the line added to the message, and kept in :attr:`errors` for ``--quiet`` to print."""
        self.exit_code = worst_exit_code((self.exit_code, EXIT_CODES["error"]))
        self.message += f"; {line}"
        self.errors.append(line)

    def take_facts(self, facts: TickFacts, decision: Decision | None) -> None:
        """Copy what the step phase found (its tick, actions, progress, errors) and the decision."""
        self.tick, self.actions, self.step_error = facts.tick, facts.actions, facts.step_error
        self.progress, self.progress_error = facts.progress, facts.progress_error
        self.decision, self.turn, self.heard = decision, facts.turn, facts.heard
        self.baseline = facts.baseline
        self.failed, self.first_error = facts.failed, facts.first_error

    def take_settlement(self, settled: Settlement) -> None:
        """Copy what settling the tick decided: its outcome, exit code, message and anomalies."""
        self.outcome, self.exit_code = settled.outcome, settled.exit_code  # type: ignore[assignment]
        self.message, self.anomalies = settled.message, settled.anomalies

    def closing_events(self) -> list[dict[str, Any]]:
        """The journal's last events of the tick: what was delivered (if anything), then the tick."""
        events: list[dict[str, Any]] = []
        if self.delivered or self.undelivered:
            delivery = {"delivered": self.delivered, "undelivered": self.undelivered}
            events.append({"event": "delivery", **delivery, "waiting": self.waiting})
        tick: dict[str, Any] = {"outcome": self.outcome, "exit_code": self.exit_code, "actions": self.actions}
        if self.turn:  # replay reads it back (a turn is never an idle wake-up); absent: a wake-up
            tick["turn"] = True
        if not self.heard:  # and this (no recovery was ignored by an agent that heard none)
            tick["heard"] = False
        if self.baseline is not None:  # and what the first rise rose from (journal replay's parity)
            tick["baseline"] = self.baseline
        events.append({"event": "tick", **tick, "progress": self.progress, "message": self.message})
        return events
