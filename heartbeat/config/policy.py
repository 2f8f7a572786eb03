"""``[policy]``, ``[budget]`` and ``[escalation]``: when being stuck becomes a human's problem."""

# No `from __future__ import annotations`: pydantic would compile each annotation string
# back into a type when the class is made, which every cron tick pays for (as in models.py).
import string
from collections.abc import Mapping
from datetime import timedelta
from typing import Literal, Self

from pydantic import Field, model_validator

from ..base.errors import ConfigError
from .types import ConfigModel, Duration, new_dict

__all__ = [
    "PLACEHOLDERS",
    "BudgetConfig",
    "EscalationConfig",
    "ModelPrice",
    "PolicyConfig",
    "check_templates",
]

PLACEHOLDERS: Mapping[str, str] = {
    "problems": "one line per anomaly of this heartbeat: '- kind: message'",
    "avoid": "the repeated actions, cycles and failing tools, separated by '; '",
    "attempt": "which attempt at this recovery this is (1, 2, ...)",
    "streak": "stuck heartbeats in a row, this one included",
    "escalate_after": "the streak at which a human is called",
    "remaining": "stuck heartbeats left before a human is called (flat_grace not counted)",
    "escalation": "a sentence saying when a human is called",
    "kinds": "the anomaly kinds of this heartbeat, e.g. 'repeat, loop'",
    "mode": "try_alternative or reassess_goal",
    "tick": "the heartbeat number",
    "advice": "what to do instead, one line per kind of anomaly of this heartbeat",
}
"""Every placeholder a template may use, with what it becomes."""

_SAMPLE = {name: f"<{name}>" for name in PLACEHOLDERS} | {
    "attempt": 1,
    "streak": 1,
    "escalate_after": 3,
    "remaining": 2,
    "tick": 1,
    "advice": "<advice>",
}


def check_templates(templates: Mapping[str, str]) -> None:
    """Raise ConfigError when a template is not valid ``str.format`` text over :data:`PLACEHOLDERS`."""
    for mode, text in templates.items():
        where = f"templates.{mode}"
        try:
            fields = [f for _, f, _, _ in string.Formatter().parse(text) if f is not None]
        except ValueError as exc:
            raise ConfigError(f"{where}: {exc} (write a literal brace as {{{{ or }}}})") from None
        for name in fields:
            if name not in PLACEHOLDERS:
                known = ", ".join("{" + p + "}" for p in PLACEHOLDERS)
                shown = "{" + name + "}" if name else "{}"
                raise ConfigError(f"{where}: unknown placeholder {shown}; known: {known}")
        try:
            text.format(**_SAMPLE)
        except (ValueError, IndexError, KeyError) as exc:
            raise ConfigError(f"{where}: {exc}") from None


class PolicyConfig(ConfigModel):
    """When a stuck streak becomes an escalation, and the recovery texts."""

    escalate_after: int = Field(default=3, ge=1, le=1_000)
    flat_grace: int = Field(
        default=1,
        ge=0,
        le=1_000,
        description=(
            "More stuck heartbeats a stretch found on a flat metric alone (no_progress) gets before a "
            "human is called, while the calls of its flat stretch keep bringing new results."
        ),
    )
    mode: Literal["enforce", "observe"] = Field(
        default="enforce", description="observe: detect and journal, but inject nothing and never escalate."
    )
    recover_after: int = Field(
        default=2, ge=1, le=1_000, description="Quiet heartbeats in a row that end a stuck stretch."
    )
    escalate_on_ignored: bool = Field(
        default=True,
        description=(
            "Escalate at streak 2 when the agent repeats what the last recovery said to avoid, "
            "or the same kind of stuck comes back."
        ),
    )
    templates: dict[Literal["try_alternative", "reassess_goal"], str] = Field(default_factory=new_dict)

    @model_validator(mode="after")
    def _templates_format(self) -> Self:
        # A bad placeholder fails here, when the config is loaded, not when the agent is stuck.
        if self.templates:
            check_templates({str(k): v for k, v in self.templates.items()})
        return self


class ModelPrice(ConfigModel):
    """A model's price in dollars per million tokens (``[budget.prices]``), for models genai-prices lacks."""

    input: float = Field(ge=0, allow_inf_nan=False, description="Dollars per million input tokens.")
    output: float = Field(ge=0, allow_inf_nan=False, description="Dollars per million output tokens.")
    cached: float | None = Field(
        default=None, ge=0, allow_inf_nan=False, description="Per million cached input tokens (else input's)."
    )


class BudgetConfig(ConfigModel):
    """Spending limits; a breach pauses the agent and notifies."""

    actions_per_tick: int | None = Field(default=None, ge=1)
    actions_per_day: int | None = Field(default=None, ge=1)
    cost_per_day: float | None = Field(default=None, gt=0, allow_inf_nan=False)
    cost_per_tick: float | None = Field(default=None, gt=0, allow_inf_nan=False)
    tokens_per_day: int | None = Field(default=None, ge=1, description="Model tokens (input plus output).")
    tokens_per_tick: int | None = Field(default=None, ge=1)
    max_ticks: int | None = Field(default=None, ge=1)
    reset_hour: int = Field(default=0, ge=0, le=23, description="UTC hour the day starts.")
    prices: dict[str, ModelPrice] = Field(
        default_factory=new_dict, description="Per-model prices that override genai-prices'."
    )


class EscalationConfig(ConfigModel):
    """How often a waiting escalation reminds people."""

    reminder_every: Duration = timedelta(hours=6)
