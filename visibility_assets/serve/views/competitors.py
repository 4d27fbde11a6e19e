"""Competitors: the category's brands side by side, a brands x platforms grid of mention rates
with their 95% Wilson intervals over the period (and pooled over the chosen platforms)."""

from __future__ import annotations

import duckdb

from visibility_assets.serve.filters import Filters
from visibility_assets.serve.views.grid import Grid

RATES = """
WITH pooled AS (
    SELECT brand, coalesce(platform, 'all') AS platform, sum(mentioned_answers) AS mentioned,
           sum(valid_answers) AS valid, sum(category_mentions) AS category_mentions
    FROM mention_metrics
    WHERE category = $category AND date BETWEEN $start AND $end
      AND (len($platforms) = 0 OR list_contains($platforms, platform))
    GROUP BY GROUPING SETS ((brand, platform), (brand))
),
rated AS (SELECT *, wilson(mentioned, valid) AS rate FROM pooled)
SELECT brand, platform, mentioned, valid, rate.rate AS mention_rate, rate.low, rate.high,
       CASE WHEN category_mentions > 0 THEN mentioned / category_mentions END AS share_of_voice
FROM rated
ORDER BY brand, platform
"""


def competitors(conn: duckdb.DuckDBPyConnection, filters: Filters, sort: str | None = None) -> dict:
    """The rates, and the grid: a row per brand, a cell per platform; sorted by the column
    `sort` (a platform or `all`, highest first), else by the pooled rate."""
    rates = Grid.of(conn.execute(RATES, filters.params("category", "start", "end", "platforms")))
    platforms = sorted({r["platform"] for r in rates.rows} - {"all"})
    by_brand: dict[str, dict] = {}
    for row in rates.rows:
        by_brand.setdefault(row["brand"], {"brand": row["brand"]})[row["platform"]] = row
    column = sort if sort in platforms or sort == "brand" else "all"
    if column == "brand":
        order = sorted(by_brand.values(), key=lambda r: r["brand"])
    else:
        order = sorted(by_brand.values(), key=lambda r: -((r.get(column) or {}).get("mention_rate") or -1))
    return {"tables": {"rates": rates}, "sort": column,
            "platforms_shown": platforms, "grid": [{"brand": r["brand"], "own": r["brand"] == filters.brand,
                      "cells": [r.get(p) for p in ["all", *platforms]]} for r in order]}
