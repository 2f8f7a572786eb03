"""What a model call cost: ``[budget.prices]`` first, then genai-prices' offline price data.

A :class:`Pricer` prices one call's tokens in dollars, or says it cannot
(:meth:`Pricer.unknown` gives the reason, said once per model by the
caller). genai-prices (``pip install -e '.[prices]'`` in the heartbeat checkout) is
imported at the first call that needs it, never by a tick that records no
model call, and a model it does not know is remembered, so it is looked up
once per process. Token counts follow genai-prices and the OpenAI API: the
input tokens include the cached ones.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import Any

from ..config.policy import ModelPrice

__all__ = ["PRICES_HINT", "Pricer"]

PRICES_HINT = "pip install -e '.[prices]' in the heartbeat checkout"
_MILLION = 1_000_000


class Pricer:
    """Prices model calls: a per-model override, else genai-prices, else None (tokens only)."""

    def __init__(self, overrides: Mapping[str, ModelPrice] | None = None) -> None:
        self.overrides = dict(overrides or {})
        self._unknown: dict[str, str] = {}  # model -> why it has no price
        self._calc: Any = None  # genai_prices' (Usage, calc_price), once imported
        self._missing = False  # genai-prices is not installed

    def __repr__(self) -> str:
        return f"Pricer(overrides={sorted(self.overrides)}, unknown={sorted(self._unknown)})"

    def price(
        self, model: str, input: int, output: int, cached: int = 0, *, at: datetime | None = None
    ) -> float | None:
        """Dollars for one call's tokens, or None when no price is known (see :meth:`unknown`).

        ``at`` is the call's time, for a price that changed over time (None: now).
        """
        override = self.overrides.get(model)
        if override is not None:
            cached = min(cached, input)
            rate = override.input if override.cached is None else override.cached
            return ((input - cached) * override.input + cached * rate + output * override.output) / _MILLION
        if model in self._unknown:
            return None
        calc = self._genai_prices()
        if calc is None:
            self._unknown[model] = f"genai-prices is not installed ({PRICES_HINT})"
            return None
        usage_type, calc_price = calc
        usage = usage_type(input_tokens=input, output_tokens=output, cache_read_tokens=min(cached, input))
        try:
            return float(calc_price(usage, model, genai_request_timestamp=at).total_price)
        except LookupError:
            pass
        provider, _, name = model.partition(":")  # "openai:gpt-4o", as PydanticAI names models
        if name:
            try:
                return float(
                    calc_price(usage, name, provider_id=provider, genai_request_timestamp=at).total_price
                )
            except LookupError:
                pass
        self._unknown[model] = "genai-prices does not know it; give its price in [budget.prices]"
        return None

    def unknown(self, model: str) -> str | None:
        """Why ``model`` has no price (after :meth:`price` returned None for it), else None."""
        return self._unknown.get(model)

    def _genai_prices(self) -> tuple[Any, Any] | None:
        if self._calc is None and not self._missing:
            try:
                from genai_prices import Usage, calc_price
            except ImportError:
                self._missing = True
                return None
            self._calc = (Usage, calc_price)
        return self._calc  # type: ignore[no-any-return]
