"""How likely each platform is to name each brand, per day: each platform has favourites,
which drift slowly, and one brand per platform jumps up or down in blocks of days (the
kind of change the pipeline's metrics should show)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from datetime import date
from functools import lru_cache

from visibility_assets.tools.simulator.answers.model import SimBrand
from visibility_assets.tools.simulator.answers.styles import platform_key, stable_digest, stable_unit, style_for

HOME_BONUS = 1.9  # a platform favours its own ecosystem's brands (Qwen names 阿里云 more often)


def brand_weights(platform: str, brands: Sequence[SimBrand], day: str | None = None) -> dict[str, float]:
    """Relative propensity (positive, not normalised) of ``platform`` to name each brand.

    Deterministic per platform name (case-insensitive); each platform favours different
    brands (and a little its own ecosystem).  With ``day`` ("YYYY-MM-DD") the weights
    drift slowly (a sine over the day ordinal) and one brand per platform, chosen by
    hash, gets a step change (x0.2 or x2.6) during some blocks of days.
    """
    brands = tuple(brands)
    weights = platform_weights(platform_key(platform), brands, day)
    return {b.name: w for b, w in zip(brands, weights)}


@lru_cache(maxsize=4096)
def platform_weights(key: str, brands: tuple[SimBrand, ...], day: str | None) -> tuple[float, ...]:
    """brand_weights in the order of ``brands``, for a platform_key."""
    if not brands:
        return ()
    home = style_for(key).home_keywords
    weights = []
    for b in brands:
        weight = 0.12 + 0.88 * stable_unit("base", key, b.name) ** 1.3
        if home:
            texts = (b.name.lower(),) + tuple(a.lower() for a in b.aliases) + tuple(x.lower() for x in b.domains)
            if any(h in t for h in home for t in texts):
                weight *= HOME_BONUS
        weights.append(weight)
    if day is not None:
        ordinal = _day_ordinal(day)
        for i, b in enumerate(brands):
            weights[i] *= _drift(key, b.name, ordinal)
        step_name, factor = _step_change(key, brands, ordinal)
        for i, b in enumerate(brands):
            if b.name == step_name:
                weights[i] *= factor
    return tuple(round(max(w, 0.01), 6) for w in weights)


def _drift(key: str, name: str, ordinal: int) -> float:
    """A slow sine of the day, its amplitude, period (17-77 days) and phase hashed per platform and brand."""
    amplitude = 0.12 + 0.25 * stable_unit("amp", key, name)
    period = 17.0 + 60.0 * stable_unit("period", key, name)
    phase = 2 * math.pi * stable_unit("phase", key, name)
    return 1.0 + amplitude * math.sin(2 * math.pi * ordinal / period + phase)


def _step_change(key: str, brands: tuple[SimBrand, ...], ordinal: int) -> tuple[str, float]:
    """The platform's stepped brand and its factor on this day (1.0 outside the stepped blocks)."""
    names = sorted(b.name for b in brands)
    d = stable_digest("step", key)
    step_name = names[int.from_bytes(d[:4], "big") % len(names)]
    span = 3 + d[4] % 5  # 3-7 days per block
    cycle = 3 + d[5] % 3  # one block in 3-5 is "stepped"
    offset = int.from_bytes(d[6:8], "big") % (span * cycle)
    stepped = ((ordinal + offset) // span) % cycle == 0
    return step_name, (0.2 if d[8] % 2 == 0 else 2.6) if stepped else 1.0


def _day_ordinal(day: str) -> int:
    try:
        return date.fromisoformat(day.strip()[:10]).toordinal()
    except ValueError:  # not a date: still a stable day number
        return 738000 + int.from_bytes(stable_digest("day", day)[:4], "big") % 3650
