"""Competitors: the category's brands side by side, a brands x platforms grid of mention rates
with their 95% Wilson intervals over the period (and pooled over the chosen platforms).

A category may hold thousands of brands: the grid shows a page of them (sorted, and searched by
name, in SQL), with the brand the workspace is on always among them."""

from __future__ import annotations

import duckdb

from visibility_assets.serve.filters import Filters
from visibility_assets.serve.views.grid import Grid

PAGE_ROWS = 50
SEARCH_CHARS = 100

# The page's brands are chosen on the sort column's rate (or the name), after the search; then
# their rows alone are read out, each brand's platforms and its pooled ('all') figures.
RATES = """
WITH rows AS MATERIALIZED (  -- read once: DuckDB scans the lake once per grouping set otherwise
    SELECT brand, platform, mentioned_answers, valid_answers, category_mentions FROM mention_metrics
    WHERE category = $category AND date BETWEEN $start AND $end
      AND (len($platforms) = 0 OR list_contains($platforms, platform))
),
pooled AS (
    SELECT brand, coalesce(platform, 'all') AS platform, sum(mentioned_answers) AS mentioned,
           sum(valid_answers) AS valid, sum(category_mentions) AS category_mentions
    FROM rows
    GROUP BY GROUPING SETS ((brand, platform), (brand))
),
rated AS (SELECT *, wilson(mentioned, valid) AS rate FROM pooled),
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
SELECT r.brand, r.platform, r.mentioned, r.valid, r.rate.rate AS mention_rate, r.rate.low, r.rate.high,
       CASE WHEN r.category_mentions > 0 THEN r.mentioned / r.category_mentions END AS share_of_voice,
       (SELECT count(*) FROM found) AS brands_found  -- not a window: answers.py says why
FROM rated AS r
WHERE r.brand IN (SELECT brand FROM page) OR r.brand = $own
ORDER BY r.brand, r.platform
"""
PLATFORMS = """
SELECT list(DISTINCT platform ORDER BY platform) FROM mention_metrics
WHERE category = $category AND date BETWEEN $start AND $end
  AND (len($platforms) = 0 OR list_contains($platforms, platform))
"""


def competitors(conn: duckdb.DuckDBPyConnection, filters: Filters, sort: str | None = None, search: str = "",
                offset: int = 0, limit: int = PAGE_ROWS) -> dict:
    """The rates of a page of brands, and the grid: a row per brand, a cell per platform; sorted
    by the column `sort` (a platform or `all`, highest first; `brand`: by name), else by the
    pooled rate; only brands whose name holds `search`; the workspace's brand always shown."""
    scope = filters.params("category", "start", "end", "platforms")
    platforms = conn.execute(PLATFORMS, scope).fetchone()[0] or []
    column = sort if sort in platforms or sort == "brand" else "all"
    rates = Grid.of(conn.execute(RATES, {**scope, "sort": column, "search": search, "limit": limit,
                                         "offset": offset, "own": filters.brand}))
    found = max((row["brands_found"] or 0 for row in rates.rows), default=0)
    rates = rates.without("brands_found")
    by_brand: dict[str, dict] = {}
    for row in rates.rows:
        by_brand.setdefault(row["brand"], {"brand": row["brand"]})[row["platform"]] = row
    if column == "brand":
        order = sorted(by_brand.values(), key=lambda r: r["brand"])
    else:
        order = sorted(by_brand.values(), key=lambda r: (-((r.get(column) or {}).get("mention_rate") or -1),
                                                         r["brand"]))
    own = [r for r in order if r["brand"] == filters.brand]
    order = own + [r for r in order if r["brand"] != filters.brand]  # the workspace's brand first
    return {"tables": {"rates": rates}, "sort": column, "search": search, "offset": offset, "limit": limit,
            "brands_found": found, "platforms_shown": platforms,
            "api": {"sort": column, "search": search, "offset": offset, "limit": limit, "brands_found": found},
            "grid": [{"brand": r["brand"], "own": r["brand"] == filters.brand,
                      "cells": [r.get(p) for p in ["all", *platforms]]} for r in order]}
