"""``[policy]``, ``[budget]`` and ``[escalation]``: when being stuck becomes a human's problem."""

# No `from __future__ import annotations`: pydantic would compile each annotation string
# back into a type when the class is made, which every cron tick pays for (as in models.py).
from datetime import timedelta
from typing import Literal, Self

from pydantic import Field, model_validator

from .configtypes import ConfigModel, Duration, new_dict

__all__ = ["BudgetConfig", "EscalationConfig", "ModelPrice", "PolicyConfig"]


class PolicyConfig(ConfigModel):
    """When a stuck streak becomes an escalation, and the recovery texts."""

    escalate_after: int = Field(default=3, ge=1, le=1_000)
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
        if self.templates:  # policy imports this module: import it only when there is work
            from .policy import check_templates

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
