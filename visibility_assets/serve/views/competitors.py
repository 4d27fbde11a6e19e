"""Competitors: the category's brands side by side, a brands x platforms grid of a share of the
metric catalog (the mention rate unless another is chosen) with its 95% Wilson interval over the
period (and pooled over the chosen platforms), and each brand's share of voice.

A category may hold thousands of brands: the grid shows a page of them (sorted, and searched by
name, in SQL), with the brand the workspace is on always among them."""

from __future__ import annotations

from functools import cache

import duckdb

from visibility_assets.measure.metric_catalog import share, shares
from visibility_assets.serve.filters import Filters
from visibility_assets.serve.views.grid import Grid

PAGE_ROWS = 50
MENTION_RATE, SHARE_OF_VOICE = "mention_rate", "share_of_voice"
SEARCH_CHARS = 100

# The page's brands are chosen on the sort column's rate (or the name), after the search; then
# their rows alone are read out, each brand's platforms and its pooled ('all') figures. The
# counts pooled and the rate are those of the chosen share of the metric catalog (rates_sql).
RATES_ROWS = """
WITH rows AS MATERIALIZED (  -- read once: DuckDB scans the lake once per grouping set otherwise
    SELECT brand, platform"""
RATES_POOLED = """ FROM mention_metrics
    WHERE category = $category AND date BETWEEN $start AND $end
      AND (len($platforms) = 0 OR list_contains($platforms, platform))
),
pooled AS (
    SELECT brand, coalesce(platform, 'all') AS platform"""
RATES_RATED = """
    FROM rows
    GROUP BY GROUPING SETS ((brand, platform), (brand))
),
rated AS (SELECT *"""
RATES_PAGE = """ FROM pooled),
found AS (
    SELECT brand, max(rate.rate) FILTER (WHERE platform = $sort) AS sort_rate
    FROM rated
    WHERE $search = '' OR contains(lower(brand), lower($search))
    GROUP BY brand
),
page AS (
    SELECT brand
    FROM found
    ORDER BY CASE WHEN $sort = 'brand' THEN NULL ELSE sort_rate END DESC NULLS LAST, brand
    LIMIT $limit OFFSET $offset
)
SELECT r.brand, r.platform"""
RATES_AFTER = """,
       (SELECT count(*) FROM found) AS brands_found  -- not a window: answers.py says why
FROM rated AS r
WHERE r.brand IN (SELECT brand FROM page) OR r.brand = $own
ORDER BY r.brand, r.platform
"""


@cache
def rates_sql(metric: str) -> str:
    """RATES for a share of the metric catalog: its counts summed per brand and platform and
    pooled, its rate with the Wilson interval as NAME, NAME_low and NAME_high, and the share of
    voice beside it. The names entering the text are the catalog's, checked when it is read."""
    rate, voice = share(metric), share(SHARE_OF_VOICE)
    columns = list(dict.fromkeys((rate.numerator, rate.denominator, voice.numerator, voice.denominator)))
    # The share of voice beside the rate, unless it is the rate (then its column is the rate's).
    beside = "" if rate is voice else (", CASE WHEN " + voice.denominator + " > 0 THEN " + voice.numerator + " / "
                                        + voice.denominator + " END AS " + voice.name)
    return (RATES_ROWS + "".join(", " + c for c in columns)
            + RATES_POOLED + "".join(", sum(" + c + ") AS " + c for c in columns)
            + RATES_RATED + ", wilson(" + rate.numerator + ", " + rate.denominator + ") AS rate" + beside
            + RATES_PAGE + ", r." + rate.numerator + ", r." + rate.denominator + ", r.rate.rate AS " + rate.name
            + ", r.rate.low AS " + rate.name + "_low, r.rate.high AS " + rate.name + "_high"
            + ("" if rate is voice else ", r." + voice.name)
            + RATES_AFTER)


PLATFORMS = """
SELECT list(DISTINCT platform ORDER BY platform) FROM mention_metrics
WHERE category = $category AND date BETWEEN $start AND $end
  AND (len($platforms) = 0 OR list_contains($platforms, platform))
"""


def _rate_or_none_last(cell: dict | None, metric: str) -> float:
    """Highest first, a 0% before a cell without a rate, as the SQL's DESC NULLS LAST."""
    rate = (cell or {}).get(metric)
    return 1.0 if rate is None else -rate


def competitors(conn: duckdb.DuckDBPyConnection, filters: Filters, sort: str | None = None, search: str = "",
                offset: int = 0, limit: int = PAGE_ROWS, metric: str = MENTION_RATE) -> dict:
    """The rates of a page of brands, and the grid: a row per brand, a cell per platform, of the
    catalog's share `metric`; sorted by the column `sort` (a platform or `all`, highest first;
    `brand`: by name), else by the pooled rate; only brands whose name holds `search`; the
    workspace's brand always shown."""
    scope = filters.params("category", "start", "end", "platforms")
    platforms = conn.execute(PLATFORMS, scope).fetchone()[0] or []
    column = sort if sort in platforms or sort == "brand" else "all"
    rates = Grid.of(conn.execute(rates_sql(metric), {**scope, "sort": column, "search": search, "limit": limit,
                                                     "offset": offset, "own": filters.brand}))
    found = max((row["brands_found"] or 0 for row in rates.rows), default=0)
    rates = rates.without("brands_found")
    by_brand: dict[str, dict] = {}
    for row in rates.rows:
        by_brand.setdefault(row["brand"], {"brand": row["brand"]})[row["platform"]] = row
    if column == "brand":
        order = sorted(by_brand.values(), key=lambda r: r["brand"])
    else:
        order = sorted(by_brand.values(), key=lambda r: (_rate_or_none_last(r.get(column), metric), r["brand"]))
    own = [r for r in order if r["brand"] == filters.brand]
    order = own + [r for r in order if r["brand"] != filters.brand]  # the workspace's brand first
    return {"tables": {"rates": rates}, "sort": column, "search": search, "offset": offset, "limit": limit,
            "brands_found": found, "platforms_shown": platforms, "metric": share(metric), "metrics": shares(),
            "api": {"metric": metric, "sort": column, "search": search, "offset": offset, "limit": limit,
                    "brands_found": found},
            "grid": [{"brand": r["brand"], "own": r["brand"] == filters.brand,
                      "cells": [r.get(p) for p in ["all", *platforms]]} for r in order]}
