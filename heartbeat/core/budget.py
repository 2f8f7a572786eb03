"""Spending limits: pure functions over the budget counters and the config."""

from __future__ import annotations

from datetime import date, datetime, timedelta

from ..config.file import BudgetConfig
from .models import AgentState, BudgetCounters

__all__ = ["budget_day", "exhausted", "overspent", "roll_over"]


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
        return f"budget: {state.budget.actions} of {config.actions_per_day} actions today used"
    if config.cost_per_day is not None and state.budget.cost >= config.cost_per_day:
        return f"budget: cost {state.budget.cost:g} of {config.cost_per_day:g} today spent"
    return None


def overspent(counters: BudgetCounters, tick_actions: int, config: BudgetConfig) -> str | None:
    """Which limit the actions so far went past, or None."""
    if config.actions_per_tick is not None and tick_actions > config.actions_per_tick:
        return f"budget: {tick_actions} actions in one tick, limit {config.actions_per_tick}"
    if config.actions_per_day is not None and counters.actions > config.actions_per_day:
        return f"budget: {counters.actions} actions today, limit {config.actions_per_day}"
    if config.cost_per_day is not None and counters.cost > config.cost_per_day:
        return f"budget: cost {counters.cost:g} today, limit {config.cost_per_day:g}"
    return None
