"""What one request cost: its usage priced by prices.yaml on the day and at the time it ran."""

from __future__ import annotations

from datetime import datetime

from visibility_assets.config import Price
from visibility_assets.core.answers import Usage

PER_MILLION = 1_000_000


def searches_billed(usage: Usage, search_used: bool) -> int:
    """Searches to charge: the platform's own count, else one when a search visibly ran."""
    if usage.search_count is not None:
        return usage.search_count
    return 1 if search_used else 0


def request_cost(price: Price | None, usage: Usage, search_used: bool, at: datetime) -> float | None:
    """None when there is no price for the platform's model that day, or no token counts."""
    if price is None or usage.prompt_tokens is None or usage.completion_tokens is None:
        return None
    cached = min(usage.cached_tokens or 0, usage.prompt_tokens)
    cached_rate = price.input_per_mtok if price.cached_input_per_mtok is None else price.cached_input_per_mtok
    tokens = ((usage.prompt_tokens - cached) * price.input_per_mtok + cached * cached_rate
              + usage.completion_tokens * price.output_per_mtok) / PER_MILLION
    total = (tokens + searches_billed(usage, search_used) * price.per_search) * price.multiplier_at(at)
    return round(total, 8)
