"""The brands the AIs offer that brands.yaml does not track, pooled over platforms and days
(untracked_brands): the report's and the workspace's "also recommended"."""

from __future__ import annotations

from datetime import date as Date

import duckdb

from visibility_assets.warehouse.db import has_tables

# Per untracked brand of the category (all categories when $category is null): the answers
# offering it on the chosen platforms and days, over the category's valid answers there, with a
# 95% Wilson interval; its best rank; the platforms offering it; the first day any platform did.
ALSO_RECOMMENDED = """
WITH chosen AS (
    SELECT * FROM untracked_brands
    WHERE ($category IS NULL OR category = $category) AND date BETWEEN $start AND $end
      AND (len($platforms) = 0 OR list_contains($platforms, platform))
),
valid AS (
    SELECT category, sum(valid_answers) AS valid_answers
    FROM (SELECT DISTINCT date, platform, category, valid_answers FROM mention_metrics
          WHERE ($category IS NULL OR category = $category) AND date BETWEEN $start AND $end
            AND (len($platforms) = 0 OR list_contains($platforms, platform)))
    GROUP BY category
),
first AS (
    SELECT category, brand_key, min(first_seen) AS first_seen FROM untracked_brands GROUP BY ALL
),
pooled AS (
    SELECT category, brand_key, min(name) AS name, sum(answers) AS answers, min(best_rank) AS best_rank,
           string_agg(DISTINCT platform, ', ' ORDER BY platform) AS platforms, min(brands_yaml) AS brands_yaml
    FROM chosen
    GROUP BY ALL
),
shared AS (
    SELECT p.*, v.valid_answers, f.first_seen, wilson(p.answers, v.valid_answers) AS offered
    FROM pooled AS p JOIN valid AS v USING (category) JOIN first AS f USING (category, brand_key)
)
SELECT category, name, answers, valid_answers, offered.rate AS share, offered.low AS share_low,
       offered.high AS share_high, best_rank, platforms, first_seen, first_seen >= $start AS new, brands_yaml
FROM shared
QUALIFY row_number() OVER (PARTITION BY category ORDER BY answers DESC, best_rank, name) <= $top
ORDER BY category, answers DESC, best_rank, name
"""
COLUMNS = ("category", "name", "answers", "valid_answers", "share", "share_low", "share_high", "best_rank",
           "platforms", "first_seen", "new", "brands_yaml")


def also_recommended(conn: duckdb.DuckDBPyConnection, category: str | None, start: Date, end: Date,
                     platforms: list[str] | tuple[str, ...] = (), top: int = 10) -> list[dict]:
    """The most offered untracked brands, each a dict of COLUMNS (none before the model exists);
    the connection must have the models' macros (wilson)."""
    if not has_tables(conn, "untracked_brands"):
        return []
    rows = conn.execute(ALSO_RECOMMENDED, {"category": category, "start": start, "end": end,
                                           "platforms": list(platforms), "top": top}).fetchall()
    return [dict(zip(COLUMNS, row)) for row in rows]
