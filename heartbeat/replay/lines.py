"""The lines of a heartbeat trace: one heartbeat each, its actions, model calls, progress and time.

The trace format (the README's "Tuning with replay") as pydantic models,
strict, extra keys ignored (``_``-annotations among them); see
:mod:`heartbeat.replay.trace` for reading them from a file or a known format.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_validator

__all__ = ["KeyedAction", "ResumedLine", "TraceAction", "TraceLine", "TraceUsage"]


class TraceAction(BaseModel):
    """One recorded action of a trace line."""

    model_config = ConfigDict(extra="ignore", strict=True)

    tool: str = Field(min_length=1)
    args: dict[str, Any] | None = None
    output: str | None = None
    error: str | None = None
    cost: float = Field(default=0.0, ge=0, allow_inf_nan=False)


class KeyedAction(TraceAction):
    """An action of the project's own journal: the detector keys computed live, replayed as they are.

    ``keys`` holds what :meth:`heartbeat.detect.monitor.Monitor.record_keys` takes
    (fingerprint, summary, output length, shape, result); the arguments and
    the output are not kept, so ``args`` and ``output`` stay None.
    """

    keys: dict[str, Any]


class TraceUsage(BaseModel):
    """One model call of a trace line: its model and tokens (input includes cached), its cost if known."""

    model_config = ConfigDict(extra="ignore", strict=True)

    model: str = Field(min_length=1)
    input_tokens: int = Field(default=0, ge=0)
    output_tokens: int = Field(default=0, ge=0)
    cached_tokens: int = Field(default=0, ge=0)
    cost: float | None = Field(default=None, ge=0, allow_inf_nan=False)
    calls: int = Field(default=1, ge=1)
    """How many calls the tokens add up (a journal's ``spend`` event sums a heartbeat's calls of a model)."""


class TraceLine(BaseModel):
    """One heartbeat of a trace: its actions, its model calls, its progress value, optionally its time."""

    model_config = ConfigDict(extra="ignore", strict=True)

    progress: float | None = Field(default=None, allow_inf_nan=False)
    baseline: float | None = Field(default=None, allow_inf_nan=False)
    """The metric before the heartbeat's first action, when it was measured (an agent's first
    heartbeat, the first after a resume: see ``ProgressSample.baseline``)."""
    actions: list[TraceAction] = Field(default_factory=list)
    usage: list[TraceUsage] = Field(default_factory=list)
    at: datetime | None = None
    turn: bool = False
    """A live agent's next model turn (a Session's, as its journal says), not a scheduled wake-up."""
    heard: bool = True
    """A recovery could reach the agent; False for an observed run (an OTel export, an observer's
    journal): its policy never says a recovery was ignored."""

    @field_validator("at", mode="before")
    @classmethod
    def _iso_time(cls, value: object) -> object:
        if value is None or isinstance(value, datetime):
            return value
        if not isinstance(value, str):
            raise ValueError(f"must be an ISO 8601 time text, not {type(value).__name__}")
        try:
            parsed = datetime.fromisoformat(value)
        except ValueError:
            raise ValueError(f"{value!r} is not an ISO 8601 time") from None
        return parsed if parsed.tzinfo is not None else parsed.replace(tzinfo=UTC)


class ResumedLine(TraceLine):
    """The first heartbeat after a ``heartbeat resume``, as a history that knows it (the journal) says.

    Replay starts a fresh stretch there (streak, recovery and progress
    samples cleared, as the resume did) and goes on past an escalation.
    """
