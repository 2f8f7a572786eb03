"""Budget arithmetic: the budget day, its roll-over and which limit was passed."""

from __future__ import annotations

from datetime import UTC, date, datetime

from heartbeat.config.file import BudgetConfig
from heartbeat.core.budget import budget_day, exhausted, overspent, roll_over, until_reset
from heartbeat.core.models import AgentState, BudgetCounters


def test_day_starts_at_reset_hour() -> None:
    """Before the reset hour a moment belongs to the previous budget day."""
    assert budget_day(datetime(2026, 3, 2, 5, 59, tzinfo=UTC), 6) == date(2026, 3, 1)
    assert budget_day(datetime(2026, 3, 2, 6, 0, tzinfo=UTC), 6) == date(2026, 3, 2)


def test_roll_over_resets_only_on_a_new_day() -> None:
    """Counters survive within the day and start from zero on the next."""
    config = BudgetConfig(reset_hour=0)
    counters = BudgetCounters(day=date(2026, 3, 2), actions=7, cost=1.5)
    same = roll_over(counters, datetime(2026, 3, 2, 23, tzinfo=UTC), config)
    assert same.actions == 7
    fresh = roll_over(counters, datetime(2026, 3, 3, 0, 1, tzinfo=UTC), config)
    assert (fresh.day, fresh.actions, fresh.cost) == (date(2026, 3, 3), 0, 0.0)


def test_exhausted_before_the_step() -> None:
    """Ticks, daily actions and daily cost each stop the step once used up."""
    state = AgentState(ticks=5)
    assert exhausted(state, BudgetConfig(max_ticks=5)) is not None
    assert exhausted(state, BudgetConfig(max_ticks=6)) is None
    state.budget = BudgetCounters(actions=10, cost=2.0)
    assert "actions" in (exhausted(state, BudgetConfig(actions_per_day=10)) or "")
    assert "cost" in (exhausted(state, BudgetConfig(cost_per_day=2.0)) or "")
    assert exhausted(state, BudgetConfig(actions_per_day=11, cost_per_day=2.5)) is None


def test_overspent_is_past_the_limit() -> None:
    """Reaching a limit is allowed; going past it is a breach."""
    config = BudgetConfig(actions_per_tick=3)
    assert overspent(BudgetCounters(), 3, config) is None
    assert "3" in (overspent(BudgetCounters(), 4, config) or "")
    assert overspent(BudgetCounters(cost=1.01), 1, BudgetConfig(cost_per_day=1.0)) is not None


def test_a_limit_per_day_says_when_it_lets_the_agent_go_on() -> None:
    """Regression (live round 41): a spent daily budget's page said only "Resume: ...", and the
    resume it asked for paused again at the next tick. A limit per day now says when its day ends
    and that a resume before then pauses again; a limit per tick or on ticks says nothing of it."""
    config = BudgetConfig(tokens_per_day=10_000, max_ticks=5, reset_hour=6)
    state = AgentState(ticks=2, budget=BudgetCounters(day=date(2026, 3, 2), tokens=12_000))
    daily = exhausted(state, config)
    assert daily is not None
    told = until_reset(daily, datetime(2026, 3, 2, 23, tzinfo=UTC), config)
    assert told is not None and told.startswith("today's budget resets at 2026-03-03 06:00 UTC")
    assert "pauses again at the next tick unless the limit in [budget] is raised" in told
    before_six = until_reset(daily, datetime(2026, 3, 3, 5, tzinfo=UTC), config) or ""
    assert "resets at 2026-03-03 06:00 UTC" in before_six  # still the budget day of March 2
    for other in (
        exhausted(AgentState(ticks=5), config),
        overspent(BudgetCounters(), 4, BudgetConfig(actions_per_tick=3)),
    ):
        assert other is not None and until_reset(other, datetime(2026, 3, 2, tzinfo=UTC), config) is None
