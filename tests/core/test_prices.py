"""Model prices: [budget.prices] first, then genai-prices' own calculation; an unknown model is None."""

from __future__ import annotations

import pytest
from genai_prices import Usage, calc_price

from heartbeat.config.file import BudgetConfig
from heartbeat.config.policy import ModelPrice
from heartbeat.core.budget import exhausted, overspent
from heartbeat.core.models import AgentState, BudgetCounters
from heartbeat.core.prices import Pricer


def test_a_known_model_costs_what_genai_prices_says() -> None:
    """Input (cached included), output and cached tokens priced by genai-prices, by plain or provider name."""
    pricer = Pricer()
    expected = float(
        calc_price(Usage(input_tokens=1000, output_tokens=200, cache_read_tokens=300), "gpt-4o").total_price
    )
    assert pricer.price("gpt-4o", 1000, 200, 300) == pytest.approx(expected)
    assert pricer.price("openai:gpt-4o", 1000, 200, 300) == pytest.approx(expected)


def test_an_override_prices_per_million_tokens() -> None:
    """[budget.prices] wins over genai-prices; cached tokens at the cached price, else the input price."""
    pricer = Pricer(
        {"gpt-4o": ModelPrice(input=1.0, output=2.0, cached=0.5), "mine": ModelPrice(input=3, output=4)}
    )
    assert pricer.price("gpt-4o", 1_000_000, 1_000_000, 400_000) == pytest.approx(0.6 + 0.2 + 2.0)
    assert pricer.price("mine", 2_000_000, 500_000, 1_000_000) == pytest.approx(6.0 + 2.0)


def test_an_unknown_model_has_no_price_and_a_reason() -> None:
    """Never priced as zero: None, and the reason to show once."""
    pricer = Pricer()
    assert pricer.price("lab-model-7", 100, 10) is None
    assert "[budget.prices]" in (pricer.unknown("lab-model-7") or "")
    assert pricer.unknown("gpt-4o") is None


def test_token_and_cost_limits_per_day_and_per_tick() -> None:
    """Reaching a token limit is allowed, passing it a breach; a spent day keeps the step from running."""
    config = BudgetConfig(tokens_per_day=1000, tokens_per_tick=500, cost_per_tick=0.5)
    assert overspent(BudgetCounters(tokens=1000), 0, config, tick_tokens=500) is None
    assert "tokens in one tick" in (overspent(BudgetCounters(tokens=501), 0, config, tick_tokens=501) or "")
    assert "tokens today" in (overspent(BudgetCounters(tokens=1001), 0, config, tick_tokens=10) or "")
    assert "cost 0.6 in one tick" in (overspent(BudgetCounters(), 0, config, tick_cost=0.6) or "")
    assert "tokens today used" in (exhausted(AgentState(budget=BudgetCounters(tokens=1000)), config) or "")
