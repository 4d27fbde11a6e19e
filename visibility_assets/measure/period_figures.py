"""The figures of one brand over a period, per platform and pooled over the chosen platforms:
each share of the metric catalog with its 95% Wilson interval, the mean list rank with its
normal interval, and each one's change against the previous period of equal length, marked
significant by the alerts' own test and decision (the two-proportion z test and change_is_clear
of macros.sql, with the Benjamini-Hochberg q over these tests).

Figures pool the counts of `mention_metrics` over the days and platforms (a rate of a period is
its answers over its answers, never a mean of daily rates), so one day and one platform read
exactly that row of `mention_metrics`. The workspace's overview, its API and CSV, and the
report all read this one query; the connection needs the models' macros (create_macros)."""

from __future__ import annotations

from datetime import date, timedelta
from functools import cache

import duckdb

from visibility_assets.measure.metric_catalog import shares as catalog_shares


def period_figures(conn: duckdb.DuckDBPyConnection, brand: str, category: str, start: date, end: date,
                   platforms: tuple[str, ...] | list[str] = (), source: str = "mention_metrics"
                   ) -> duckdb.DuckDBPyConnection:
    """The figures' query run for a brand, its category, a period and the chosen platforms (none:
    every platform); the cursor holds its rows. `source`: mention_metrics, or a table of the
    caller's holding (at least) its rows of the brand, the period and the one before."""
    previous_start = start - timedelta(days=(end - start).days + 1)
    return conn.execute(figures_sql(source), {"brand": brand, "category": category, "start": start, "end": end,
                                              "previous_start": previous_start, "platforms": list(platforms)})


# The brand's rows are read into a MATERIALIZED table expression before each GROUPING SETS: over
# the lake, DuckDB may scan the table once per grouping set otherwise (TREND: 56 -> 23 ms at 5,000 brands).
FIGURES_ROWS = """
WITH rows AS MATERIALIZED (
    SELECT CASE WHEN date >= $start THEN 'current' ELSE 'previous' END AS period, *
    FROM """
FIGURES_FILTER = """
    WHERE brand = $brand AND category = $category AND date BETWEEN $previous_start AND $end
      AND (len($platforms) = 0 OR list_contains($platforms, platform))
),
pooled AS (
    SELECT period, coalesce(platform, 'all') AS platform,
           sum(listed_answers) AS listed, sum(avg_list_rank * listed_answers) AS rank_sum,
           sum(list_rank_sum_sq) AS rank_sum_sq"""
FIGURES_TESTS = """
    FROM rows
    GROUP BY GROUPING SETS ((period, platform), (period))
),
shares AS ("""


@cache
def figures_sql(source: str = "mention_metrics") -> str:
    """FIGURES over the shares of the metric catalog (dbt_like_sql/metrics.yml): each count column
    they pool is summed once, then each share is a (metric, x, n) row. The names and columns
    entering the text are the catalog's, checked as identifiers when it is read, and `source`,
    a table name of the code's own."""
    if not source.isidentifier():
        raise ValueError(f"not a table name: {source!r}")
    shares = catalog_shares()
    columns = list(dict.fromkeys(c for m in shares for c in (m.numerator, m.denominator)))
    sums = "".join(",\n           sum(" + c + ") AS " + c for c in columns)
    rows = "\n    UNION ALL ".join("SELECT period, platform, '" + m.name + "' AS metric, " + m.numerator + " AS x, "
                                  + m.denominator + " AS n FROM pooled" for m in shares)
    return FIGURES_ROWS + source + FIGURES_FILTER + sums + FIGURES_TESTS + "\n    " + rows + "\n" + FIGURES_AFTER_SHARES


FIGURES_AFTER_SHARES = """),
share_tests AS (
    SELECT c.platform, c.metric, c.x AS x1, c.n AS n1, p.x AS x0, p.n AS n0,
           wilson(c.x, c.n) AS now, wilson(p.x, p.n) AS before,
           two_proportion_z(c.x, c.n, p.x, p.n) AS z
    FROM shares AS c
    LEFT JOIN shares AS p ON p.period = 'previous' AND p.platform = c.platform AND p.metric = c.metric
    WHERE c.period = 'current'
),
ranks AS (  -- the mean list position with a normal interval; the change by Welch's z
    SELECT period, platform, listed AS n, rank_sum / listed AS mean,
           CASE WHEN listed > 1 THEN greatest(0.0, (rank_sum_sq - rank_sum * rank_sum / listed) / (listed - 1)) END
               AS variance
    FROM pooled
    WHERE listed > 0
),
rank_tests AS (
    SELECT c.platform, 'avg_list_rank' AS metric, c.n AS n1, p.n AS n0, c.mean AS value,
           c.mean - 1.959963984540054 * sqrt(c.variance / c.n) AS low,
           c.mean + 1.959963984540054 * sqrt(c.variance / c.n) AS high, p.mean AS previous,
           CASE WHEN c.variance + p.variance > 0
                THEN (c.mean - p.mean) / sqrt(c.variance / c.n + p.variance / p.n) END AS z
    FROM ranks AS c
    LEFT JOIN ranks AS p ON p.period = 'previous' AND p.platform = c.platform
    WHERE c.period = 'current'
),
tests AS (
    SELECT platform, metric, x1, n1, x0, n0, now.rate AS value, now.low, now.high, before.rate AS previous, z
    FROM share_tests
    UNION ALL
    SELECT platform, metric, NULL, n1, NULL, n0, value, low, high, previous, z FROM rank_tests
),
tested AS (
    SELECT *, CASE WHEN z IS NOT NULL THEN normal_two_sided_p(z) END AS p_value FROM tests
),
ranked AS (
    SELECT *, row_number() OVER (ORDER BY p_value NULLS LAST, metric, platform) AS p_rank,
           (SELECT count(p_value) FROM tested) AS tests  -- not a window: answers.py says why
    FROM tested
),
adjusted AS (
    SELECT *, CASE WHEN p_value IS NOT NULL THEN least(1.0, min(p_value * tests / p_rank) OVER (
               ORDER BY p_rank DESC ROWS UNBOUNDED PRECEDING)) END AS q_value
    FROM ranked
)
SELECT platform, metric, value, low, high, previous, value - previous AS change, p_value, q_value,
       coalesce(change_is_clear(p_value, q_value), false) AS significant,  -- the alerts' rule (macros.sql)
       x1 AS count, n1 AS base, x0 AS previous_count, n0 AS previous_base
FROM adjusted
ORDER BY platform = 'all' DESC, platform, metric
"""

