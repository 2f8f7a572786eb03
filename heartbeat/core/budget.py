"""Spending limits: pure functions over the budget counters and the config."""

from __future__ import annotations

from datetime import UTC, date, datetime, time, timedelta

from ..config.file import BudgetConfig
from .models import AgentState, BudgetCounters

__all__ = ["budget_day", "exhausted", "overspent", "roll_over", "until_reset"]

_TODAY = "today"  # in every reason a limit per day gives, and in no other (see until_reset)


def budget_day(now: datetime, reset_hour: int) -> date:
    """The budget day ``now`` belongs to: days start at ``reset_hour`` UTC."""
    return (now - timedelta(hours=reset_hour)).date()


def roll_over(counters: BudgetCounters, now: datetime, config: BudgetConfig) -> BudgetCounters:
    """Counters for the budget day of ``now``: fresh ones when the day has changed."""
    day = budget_day(now, config.reset_hour)
    if counters.day == day:
        return counters
    return BudgetCounters(day=day)


def exhausted(state: AgentState, config: BudgetConfig) -> str | None:
    """Why the step must not be called at all this tick, or None."""
    if config.max_ticks is not None and state.ticks >= config.max_ticks:
        return f"budget: {state.ticks} of {config.max_ticks} ticks used"
    if config.actions_per_day is not None and state.budget.actions >= config.actions_per_day:
        return f"budget: {state.budget.actions} of {config.actions_per_day} actions {_TODAY} used"
    if config.cost_per_day is not None and state.budget.cost >= config.cost_per_day:
        return f"budget: cost {state.budget.cost:g} of {config.cost_per_day:g} {_TODAY} spent"
    if config.tokens_per_day is not None and state.budget.tokens >= config.tokens_per_day:
        return f"budget: {state.budget.tokens} of {config.tokens_per_day} tokens {_TODAY} used"
    return None


def overspent(
    counters: BudgetCounters,
    tick_actions: int,
    config: BudgetConfig,
    *,
    tick_tokens: int = 0,
    tick_cost: float = 0.0,
) -> str | None:
    """Which limit the actions and model calls so far went past, or None."""
    if config.actions_per_tick is not None and tick_actions > config.actions_per_tick:
        return f"budget: {tick_actions} actions in one tick, limit {config.actions_per_tick}"
    if config.actions_per_day is not None and counters.actions > config.actions_per_day:
        return f"budget: {counters.actions} actions {_TODAY}, limit {config.actions_per_day}"
    if config.cost_per_tick is not None and tick_cost > config.cost_per_tick:
        return f"budget: cost {tick_cost:g} in one tick, limit {config.cost_per_tick:g}"
    if config.cost_per_day is not None and counters.cost > config.cost_per_day:
        return f"budget: cost {counters.cost:g} {_TODAY}, limit {config.cost_per_day:g}"
    if config.tokens_per_tick is not None and tick_tokens > config.tokens_per_tick:
        return f"budget: {tick_tokens} tokens in one tick, limit {config.tokens_per_tick}"
    if config.tokens_per_day is not None and counters.tokens > config.tokens_per_day:
        return f"budget: {counters.tokens} tokens {_TODAY}, limit {config.tokens_per_day}"
    return None


def until_reset(reason: str, now: datetime, config: BudgetConfig) -> str | None:
    """For a pause by a limit per day (``reason``, as :func:`exhausted` or :func:`overspent` gave it):
    when the budget day ends, and that a resume before then pauses again at the next tick unless
    the limit is raised; None for any other reason (a limit per tick, or on ticks)."""
    if _TODAY not in reason:
        return None
    day = budget_day(now, config.reset_hour) + timedelta(days=1)
    resets = datetime.combine(day, time(config.reset_hour), UTC)
    return (
        f"today's budget resets at {resets:%Y-%m-%d %H:%M} UTC (budget.reset_hour); a resume before then"
        " pauses again at the next tick unless the limit in [budget] is raised in heartbeat.toml"
    )
