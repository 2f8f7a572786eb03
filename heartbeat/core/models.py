"""The data heartbeat keeps and passes around: state, actions, anomalies, decisions.

Everything here is a pydantic model with ``extra="forbid"`` so a typo in a
hand-edited ``state.json`` is an error, not a silently ignored field. The
state is bounded: lists are trimmed to fixed limits when appended to, so the
file does not grow with the length of the run.
"""

# No `from __future__ import annotations` here: pydantic would have to compile every
# annotation string back into a type at import, which a cron tick pays for each time.
import math
from collections.abc import Iterable
from datetime import UTC, date, datetime
from enum import StrEnum
from typing import Any, Literal, TypeVar

from pydantic import AwareDatetime, BaseModel, ConfigDict, Field, field_validator

__all__ = [
    "REFUSED",
    "SCHEMA_VERSION",
    "STEP_ERROR_TOOL",
    "ActionRecord",
    "AgentState",
    "Anomaly",
    "BudgetCounters",
    "Decision",
    "DecisionAction",
    "Escalation",
    "ModelSpend",
    "Notification",
    "ProgressSample",
    "Recovery",
    "RecoveryMode",
    "Status",
    "append_bounded",
    "progress_value",
    "rose_at",
]

SCHEMA_VERSION = 3
"""The ``schema_version`` this release writes; older ones are migrated on load."""

STEP_ERROR_TOOL = "step"
"""The tool name a step that raised is recorded under: an error to escalate on, never an action to avoid."""
REFUSED = "not run: refused by heartbeat, asked again after the model was told not to call it"
"""The error a call refused before it ran is recorded with (an adapter's model asking again for a call
it was told not to make): stuck at once, as ``repeat`` reads it."""

# Bounds of the lists in state.json: no more than is used, since every tick loads,
# re-seeds the detectors from and saves all of it. The action history must hold the
# largest detector window (30 by default: the recurring and cycle windows; recurring also
# reads the action before its window, whether it waited); the Monitor and the runner raise
# HISTORY_LIMIT to that when configured larger. `heartbeat status` shows the last 20
# progress samples, ESCALATION.md the last 10 actions.
HISTORY_LIMIT = 31
PROGRESS_LIMIT = 20
ANOMALY_LIMIT = 20
TEXT_LIMIT = 200  # error texts and summaries are cut to this many characters

T = TypeVar("T")


def append_bounded(items: list[T], item: T, limit: int) -> None:
    """Append ``item`` and drop the oldest entries beyond ``limit``."""
    items.append(item)
    if len(items) > limit:
        del items[: len(items) - limit]


def clip(text: str | None, limit: int = TEXT_LIMIT) -> str | None:
    """Cut ``text`` to ``limit`` characters, marking the cut with an ellipsis."""
    if text is None or len(text) <= limit:
        return text
    return text[: limit - 1] + "…"


def printable(text: str) -> str:
    """``text`` with line breaks and other control characters as escapes (``\\n``, ``\\x1b``).

    For a name an agent chose (a tool's) where a person reads it on a terminal: it
    cannot start a line of its own or send the terminal an escape sequence.
    """
    if text.isprintable():
        return text
    return "".join(c if c.isprintable() or c == " " else _escaped(c) for c in text)


def printable_lines(text: str, indent: str) -> str:
    """``text`` for a terminal, line breaks kept: each line :func:`printable`, the later ones indented.

    For text several lines long that a person reads (recovery instructions, a resume's
    note): a line cannot send the terminal an escape sequence, and the indent keeps a
    line from passing as a field of its own (``status``'s ``KILL  absent``).
    """
    return ("\n" + indent).join(printable(line) for line in text.splitlines() or [""])


def _escaped(char: str) -> str:
    """One character as Python writes it in a string literal (``\\n``, ``\\x1b``, ``\\u2028``)."""
    return repr(char)[1:-1] if char not in "'\"" else char


def new_list() -> list[Any]:
    """An empty list, as a field's default_factory: pydantic reads a builtin's text signature slowly."""
    return []


def new_dict() -> dict[str, Any]:
    """An empty dict, as a field's default_factory (see new_list)."""
    return {}


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", validate_assignment=False)


# For the models a routine tick never validates on their own (the detectors build
# records and anomalies from values they checked, and AgentState validates what it
# nests as part of its own schema): their validators are built at first use instead
# of at import, which a cron tick, a fresh process each time, pays for.
_DEFERRED = ConfigDict(extra="forbid", validate_assignment=False, defer_build=True)


# Assignments to history items, counted: heartbeat.state.text reuses an item's text from the
# last save only while nothing was assigned since (comparing every field each save costs more).
_record_edits = [0]


def record_edits() -> int:
    """How many times a field of any ActionRecord or ProgressSample was assigned or deleted so far."""
    return _record_edits[0]


class _Record(_Model):
    model_config = _DEFERRED

    def __setattr__(self, name: str, value: Any) -> None:
        _record_edits[0] += 1
        super().__setattr__(name, value)

    def __delattr__(self, name: str) -> None:
        _record_edits[0] += 1
        super().__delattr__(name)


class Status(StrEnum):
    """Whether the heartbeat calls the agent's step."""

    ACTIVE = "active"
    PAUSED = "paused"
    NEEDS_HUMAN = "needs_human"


class RecoveryMode(StrEnum):
    """What the agent is told to do differently."""

    TRY_ALTERNATIVE = "try_alternative"
    REASSESS_GOAL = "reassess_goal"


DecisionAction = Literal["continue", "try_alternative", "reassess_goal", "escalate"]


class ActionRecord(_Record):
    """One action the agent recorded: a tool call, reduced to what detectors need."""

    model_config = _DEFERRED

    index: int = Field(ge=1, description="Action number across the whole run, from 1.")
    tick: int = Field(ge=0, description="The heartbeat in which it was recorded.")
    at: AwareDatetime
    tool: str
    fingerprint: str = Field(description="Hash of tool + canonical arguments (volatile ones dropped).")
    summary: str = Field(description="tool(args) as a human reads it, cut to 200 characters.")
    output_len: int | None = Field(
        default=None, ge=0, description="Characters of output once stripped; None if none reported."
    )
    error: str | None = None
    cost: float = Field(default=0.0, ge=0, allow_inf_nan=False)
    shape: str | None = Field(
        default=None,
        description="Hash of tool + arguments with numbers, dates and ids masked (None: older state).",
    )
    result: str | None = Field(
        default=None, description="Hash of the output (or error text) with digits masked; None if neither."
    )
    failure: str | None = Field(
        default=None,
        description="A failed action's words (its error's, its output's named failure) as digests.",
    )
    facts: str | None = Field(
        default=None,
        description=(
            "A message to a person: its words, the data it and its answer hold (digests); ! if it promises,"
            " ? if it asks, = if the answer says the person had already said it; @ before each act the"
            " answer reports the person did."
        ),
    )


class ProgressSample(_Record):
    """One measurement of the progress metric (or the reason it failed)."""

    model_config = _DEFERRED

    tick: int = Field(ge=0)
    at: AwareDatetime
    value: float | None = Field(default=None, allow_inf_nan=False)
    error: str | None = None
    baseline: float | None = Field(default=None, allow_inf_nan=False)
    """The metric measured before this heartbeat's step, taken when no measured sample was kept
    (an agent's first heartbeat, the first after ``heartbeat resume``): what its value rose from."""


def progress_value(value: float | None) -> float | None:
    """A progress value as a float (None stays None); ValueError for one that is not a finite number."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise ValueError(f"progress must be a finite number or None, not {value!r}")
    return float(value)


def rose_at(samples: Iterable[ProgressSample]) -> int | None:
    """The tick of the last measured sample above every measured one before it (None: no rise).

    What "the metric rose" means everywhere, the detectors' evidence and the policy's: a new
    high, so a metric that dips and comes back (a noisy one, flat on the whole) has not moved on.
    The first measured sample rose when it is above its ``baseline``: the work of the agent's
    first heartbeat is seen as the work it is, not only from the second.
    """
    high: float | None = None
    rose: int | None = None
    for sample in samples:
        value = sample.value
        if value is None:
            continue
        if high is None:
            high = value
            if sample.baseline is not None and value > sample.baseline:
                rose = sample.tick
        elif value > high:
            high, rose = value, sample.tick
    return rose


class Anomaly(_Model):
    """A detector's finding: what is stuck, in words and as evidence."""

    model_config = _DEFERRED

    kind: str
    message: str
    tick: int = Field(ge=0)
    action: int | None = Field(default=None, description="Index of the action that tripped it.")
    at: AwareDatetime
    tool: str | None = None
    evidence: dict[str, Any] = Field(default_factory=new_dict)
    again: bool = Field(
        default=False,
        exclude=True,
        description=(
            "The same finding as one already reported this heartbeat, returned again for a later "
            "action that continues it (never saved or journaled again)."
        ),
    )


class Recovery(_Model):
    """The recovery in progress: its mode, how often it was tried, what to avoid."""

    model_config = _DEFERRED

    mode: RecoveryMode
    attempts: int = Field(default=1, ge=1)
    since_tick: int = Field(ge=0)
    kinds: list[str] = Field(default_factory=new_list)
    avoid: list[str] = Field(default_factory=new_list, description="Actions not to repeat.")
    quiet: int = Field(
        default=0, ge=0, description="Heartbeats in a row without an anomaly since the last stuck one."
    )


class Decision(_Model):
    """What the policy decided after a tick; the runner carries it out."""

    action: DecisionAction
    stuck_streak: int = Field(ge=0)
    reason: str = ""
    recovery: Recovery | None = None
    instructions: str | None = None
    observed: DecisionAction | None = Field(
        default=None, description='In observe mode: what enforce mode would have done ("continue" is done).'
    )


class ModelSpend(_Model):
    """What one model's calls used: calls, tokens (input includes cached) and dollars."""

    model_config = _DEFERRED

    calls: int = Field(default=0, ge=0)
    input: int = Field(default=0, ge=0, description="Input tokens, the cached ones included.")
    output: int = Field(default=0, ge=0)
    cached: int = Field(default=0, ge=0, description="Input tokens read from the provider's cache.")
    cost: float = Field(default=0.0, ge=0, allow_inf_nan=False, description="Dollars, for the priced calls.")
    unpriced: int = Field(
        default=0, ge=0, description="Calls no price was known for (counted in tokens only)."
    )

    @property
    def tokens(self) -> int:
        """Input plus output tokens."""
        return self.input + self.output

    def add(self, other: "ModelSpend") -> None:
        """Add ``other``'s calls, tokens and cost to this one."""
        self.calls += other.calls
        self.input += other.input
        self.output += other.output
        self.cached += other.cached
        self.cost += other.cost
        self.unpriced += other.unpriced


MODELS_LIMIT = 50
"""Models kept by name in the spend counters; the rest are added up under ``OTHER_MODELS``."""
OTHER_MODELS = "(other)"


def add_spend(models: dict[str, ModelSpend], model: str, spend: ModelSpend) -> None:
    """Add ``spend`` to ``models[model]`` (a bounded dict: past the limit, under ``OTHER_MODELS``)."""
    if model not in models and len(models) >= MODELS_LIMIT:
        model = OTHER_MODELS
    kept = models.get(model)
    if kept is None:
        models[model] = spend.model_copy()
    else:
        kept.add(spend)


def merged_spend(totals: dict[str, ModelSpend], usage: dict[str, ModelSpend]) -> dict[str, ModelSpend]:
    """``totals`` plus a heartbeat's ``usage``, as a new dict of new entries (the state's may be shared)."""
    merged = {model: spend.model_copy() for model, spend in totals.items()}
    for model, spend in usage.items():
        add_spend(merged, model, spend)
    return merged


def spend_since(now: dict[str, ModelSpend], before: dict[str, ModelSpend]) -> dict[str, ModelSpend]:
    """The model calls ``now`` holds beyond ``before`` (an earlier copy of the same counters), by model."""
    since: dict[str, ModelSpend] = {}
    for model, spend in now.items():
        was = before.get(model)
        if was is None:
            since[model] = spend.model_copy()
        elif spend.calls > was.calls:
            since[model] = ModelSpend.model_construct(
                calls=spend.calls - was.calls,
                input=spend.input - was.input,
                output=spend.output - was.output,
                cached=spend.cached - was.cached,
                cost=spend.cost - was.cost,
                unpriced=spend.unpriced - was.unpriced,
            )
    return since


class BudgetCounters(_Model):
    """Spending counted against the daily budget; reset at the configured hour."""

    model_config = _DEFERRED

    day: date | None = Field(default=None, description="The budget day these counters belong to.")
    actions: int = Field(default=0, ge=0)
    cost: float = Field(default=0.0, ge=0, allow_inf_nan=False, description="Dollars: tool calls and models.")
    tokens: int = Field(default=0, ge=0, description="Model tokens (input plus output) today.")
    models: dict[str, ModelSpend] = Field(
        default_factory=new_dict, description="Today's model calls by model."
    )


class Escalation(_Model):
    """The open escalation to a human."""

    model_config = _DEFERRED

    at: AwareDatetime
    tick: int = Field(ge=0)
    reason: str
    key: str = Field(description="Idempotency key shared by every notification of it.")
    kinds: list[str] = Field(default_factory=new_list)
    last_reminder_at: AwareDatetime | None = None


class Notification(BaseModel):
    """One message to a human, with its evidence and an idempotency key."""

    # defer_build: the validator is built at first use, not at import; few ticks notify.
    model_config = ConfigDict(extra="forbid", frozen=True, defer_build=True)

    key: str = Field(min_length=1, max_length=200, description="Idempotency key.")
    kind: str = Field(min_length=1, description='"escalation", "reminder", "budget", "resolved", ...')
    agent: str
    reason: str
    text: str = Field(description="The human message; Slack and Discord show it as is.")
    created_at: AwareDatetime
    payload: dict[str, Any] = Field(
        default_factory=new_dict, description="Evidence: anomalies, stuck_streak, last_actions, ..."
    )

    @field_validator("created_at")
    @classmethod
    def _utc(cls, value: datetime) -> datetime:
        return value.astimezone(UTC)

    def to_json(self) -> dict[str, Any]:
        """The webhook body: the payload flattened beside ``text``, ``agent``, ``kind``, ...."""
        dumped = self.model_dump(mode="json")
        body: dict[str, Any] = {"anomalies": [], "stuck_streak": None, "last_actions": []}
        body.update(dumped["payload"])
        # The named fields win over payload keys of the same name.
        body.update(
            text=self.text,
            agent=self.agent,
            kind=self.kind,
            reason=self.reason,
            idempotency_key=self.key,
            created_at=dumped["created_at"],
        )
        return body


class AgentState(_Model):
    """The agent's whole persisted state: the content of ``state.json``."""

    schema_version: int = SCHEMA_VERSION
    status: Status = Status.ACTIVE
    status_reason: str | None = None
    ticks: int = Field(default=0, ge=0, description="Heartbeats in which the step was called.")
    last_tick_at: AwareDatetime | None = None
    data: dict[str, Any] = Field(default_factory=new_dict, description="The agent's own data.")
    instructions: str | None = None
    recovery: Recovery | None = None
    stuck_streak: int = Field(default=0, ge=0)
    actions_total: int = Field(default=0, ge=0)
    history: list[ActionRecord] = Field(default_factory=new_list)
    progress: list[ProgressSample] = Field(default_factory=new_list)
    anomalies: list[Anomaly] = Field(default_factory=new_list)
    anomaly_totals: dict[str, int] = Field(
        default_factory=new_dict,
        description="Anomalies kept in this state since it began, by kind; only ever grows "
        "(Prometheus' heartbeat_anomalies_total).",
    )
    budget: BudgetCounters = Field(default_factory=BudgetCounters)
    spend_totals: dict[str, ModelSpend] = Field(
        default_factory=new_dict,
        description="Model calls since this state began, by model; only ever grows "
        "(Prometheus' heartbeat_tokens_total and heartbeat_cost_dollars_total).",
    )
    escalation: Escalation | None = None
    notices: list[Notification] = Field(
        default_factory=new_list,
        description="Notifications decided by a saved tick but not yet put in outbox/ "
        "(a crash between the two saves leaves them here; the next tick queues them).",
    )

    def last_progress(self) -> float | None:
        """The most recent measured progress value, if any."""
        for sample in reversed(self.progress):
            if sample.value is not None:
                return sample.value
        return None
