"""Overview: one brand's figures per platform and pooled over the chosen platforms, each with
its 95% interval and its change against the previous period of equal length; a change is
marked significant by the alerts' own test and decision (the two-proportion z test and
change_is_clear of macros.sql, with the Benjamini-Hochberg q over the view's tests).

Figures pool the counts of `mention_metrics` over the days and platforms (a rate of a period
is its answers over its answers, never a mean of daily rates), so one day and one platform
read exactly that row of `mention_metrics`."""

from __future__ import annotations

from functools import cache

import duckdb

from visibility_assets.clean.sentiment_accuracy import LEXICON_HELD_OUT
from visibility_assets.measure.discovery import COLUMNS as DISCOVERY_COLUMNS
from visibility_assets.measure.discovery import also_recommended
from visibility_assets.measure.metric_catalog import metric_catalog
from visibility_assets.measure.metric_catalog import shares as catalog_shares
from visibility_assets.serve.filters import Filters
from visibility_assets.serve.views.grid import Grid
from visibility_assets.warehouse.db import has_tables

# The brand's rows are read into a MATERIALIZED table expression before each GROUPING SETS: over
# the lake, DuckDB may scan the table once per grouping set otherwise (TREND: 56 -> 23 ms at 5,000 brands).
FIGURES_ROWS = """
WITH rows AS MATERIALIZED (
    SELECT CASE WHEN date >= $start THEN 'current' ELSE 'previous' END AS period, *
    FROM mention_metrics
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
def figures_sql() -> str:
    """FIGURES over the shares of the metric catalog (dbt_like_sql/metrics.yml): each count column
    they pool is summed once, then each share is a (metric, x, n) row. The names and columns
    entering the text are the catalog's, checked as identifiers when it is read."""
    shares = catalog_shares()
    columns = list(dict.fromkeys(c for m in shares for c in (m.numerator, m.denominator)))
    sums = "".join(",\n           sum(" + c + ") AS " + c for c in columns)
    rows = "\n    UNION ALL ".join("SELECT period, platform, '" + m.name + "' AS metric, " + m.numerator + " AS x, "
                                  + m.denominator + " AS n FROM pooled" for m in shares)
    return FIGURES_ROWS + sums + FIGURES_TESTS + "\n    " + rows + "\n" + FIGURES_AFTER_SHARES


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

TREND = """
WITH rows AS MATERIALIZED (
    SELECT date, platform, mentioned_answers, valid_answers FROM mention_metrics
    WHERE brand = $brand AND category = $category AND date BETWEEN $start AND $end
      AND (len($platforms) = 0 OR list_contains($platforms, platform))
),
daily AS (
    SELECT date, coalesce(platform, 'all') AS platform, sum(mentioned_answers) AS mentioned,
           sum(valid_answers) AS valid
    FROM rows
    GROUP BY GROUPING SETS ((date, platform), (date))
),
rated AS (SELECT *, wilson(mentioned, valid) AS rate FROM daily)
SELECT date, platform, mentioned, valid, rate.rate AS mention_rate, rate.low, rate.high
FROM rated
ORDER BY date, platform
"""

MODEL_CHANGES = """
SELECT date, platform, subject FROM visibility_alerts
WHERE kind = 'model_change' AND date BETWEEN $start AND $end
  AND (len($platforms) = 0 OR list_contains($platforms, platform))
ORDER BY date, platform
"""


# Who labelled the sentiment figures' mentions, per platform: the judge (judge.yaml) or the
# lexicon, and the judge's agreement with the lexicon in the period's latest week (sentiment_agreement).
SENTIMENT_METHOD = """
WITH rows AS MATERIALIZED (
    SELECT platform, mentioned_answers, judge_labelled_answers FROM mention_metrics
    WHERE brand = $brand AND category = $category AND date BETWEEN $start AND $end
      AND (len($platforms) = 0 OR list_contains($platforms, platform))
),
mentions AS (
    SELECT coalesce(platform, 'all') AS platform, sum(mentioned_answers) AS mentioned,
           sum(judge_labelled_answers) AS judged
    FROM rows
    GROUP BY GROUPING SETS ((platform), ())
)
SELECT platform, mentioned, judged,
       CASE WHEN mentioned = 0 THEN NULL WHEN judged = 0 THEN 'lexicon' WHEN judged = mentioned THEN 'judge'
            ELSE 'judge and lexicon' END AS method
FROM mentions
ORDER BY platform = 'all' DESC, platform
"""
AGREEMENT = """
SELECT platform, arg_max(week, week) AS week, arg_max(judge_model || ' (prompt ' || judge_prompt_version || ')', week)
           AS judge, arg_max(labelled_by_both, week) AS labelled_by_both, arg_max(agreement, week) AS agreement,
       arg_max(kappa, week) AS kappa
FROM sentiment_agreement
WHERE week BETWEEN CAST(date_trunc('week', CAST($start AS DATE)) AS DATE) AND $end
  AND (len($platforms) = 0 OR list_contains($platforms, platform))
GROUP BY platform
"""


# What the AIs say about the brand in the period's latest week: the judge's most quoted claims
# and the lexicon's most frequent cues, pooled over the chosen platforms (brand_claims).
CLAIMS_SHOWN = 8
CLAIMS = """
WITH chosen AS (
    SELECT * FROM brand_claims
    WHERE brand = $brand AND week BETWEEN CAST(date_trunc('week', CAST($start AS DATE)) AS DATE) AND $end
      AND (len($platforms) = 0 OR list_contains($platforms, platform))
),
latest AS (SELECT * FROM chosen WHERE week = (SELECT max(week) FROM chosen)),
naming AS (  -- per kind, the answers naming the brand on the platforms that have that kind (claims: judged ones)
    SELECT kind, sum(mentioned_answers) AS mentioned FROM (SELECT DISTINCT kind, platform, mentioned_answers FROM latest)
    GROUP BY kind
)
SELECT kind, phrase, max(week) AS week, sum(answers) AS answers, sum(answers) / max(naming.mentioned) AS share,
       bool_and(new_this_week) AS new_this_week, string_agg(platform, ', ' ORDER BY platform) AS platforms
FROM latest JOIN naming USING (kind)
GROUP BY kind, phrase
QUALIFY row_number() OVER (PARTITION BY kind ORDER BY sum(answers) DESC, phrase) <= $shown
ORDER BY kind, answers DESC, phrase
"""


def claims(conn: duckdb.DuckDBPyConnection, filters: Filters, quotes: bool) -> Grid:
    """The top claims and cues; without `quotes` (a viewer, who never reads answer text) the cues only."""
    if not has_tables(conn, "brand_claims"):
        return Grid(("kind", "phrase", "week", "answers", "share", "new_this_week", "platforms"), ())
    grid = Grid.of(conn.execute(CLAIMS, {**filters.params("brand", "start", "end", "platforms"), "shown": CLAIMS_SHOWN}))
    return grid if quotes else Grid(grid.columns, tuple(row for row in grid.rows if row["kind"] != "claim"))


def sentiment_method(conn: duckdb.DuckDBPyConnection, filters: Filters) -> Grid:
    """Per platform, which method labelled the mentions and, for the judge, its agreement with the lexicon."""
    grid = Grid.of(conn.execute(SENTIMENT_METHOD, filters.params("brand", "category", "start", "end", "platforms")))
    agreement = {}
    if has_tables(conn, "sentiment_agreement"):
        rows = Grid.of(conn.execute(AGREEMENT, filters.params("start", "end", "platforms"))).rows
        agreement = {row["platform"]: row for row in rows}
    extra = ("judge", "week", "labelled_by_both", "agreement", "kappa")
    rows = tuple({**row, **{k: agreement.get(row["platform"], {}).get(k) for k in extra}} for row in grid.rows)
    return Grid(grid.columns + extra, rows)


def also_offered(conn: duckdb.DuckDBPyConnection, filters: Filters) -> Grid:
    """The options of the brand's category that brands.yaml does not track, with their lines."""
    rows = also_recommended(conn, filters.category, filters.start, filters.end, filters.platforms)
    return Grid(DISCOVERY_COLUMNS, tuple(rows))


def overview(conn: duckdb.DuckDBPyConnection, filters: Filters, quotes: bool = False) -> dict:
    figures = Grid.of(conn.execute(figures_sql(), filters.params("brand", "category", "start", "end", "previous_start",
                                                           "platforms")))
    trend = Grid.of(conn.execute(TREND, filters.params("brand", "category", "start", "end", "platforms")))
    changes = Grid.of(conn.execute(MODEL_CHANGES, filters.params("start", "end", "platforms")))
    by_metric: dict[str, dict[str, dict]] = {metric.name: {} for metric in metric_catalog()}
    for row in figures.rows:
        by_metric[row["metric"]][row["platform"]] = row
    columns = ["all"] + sorted({row["platform"] for row in figures.rows} - {"all"})
    return {"tables": {"figures": figures, "trend": trend, "model_changes": changes,
                       "sentiment_method": sentiment_method(conn, filters), "claims": claims(conn, filters, quotes),
                       "also_recommended": also_offered(conn, filters)},
            "by_metric": by_metric, "columns": columns, "lexicon_accuracy": LEXICON_HELD_OUT.sentence(),
            "quotes": quotes}

