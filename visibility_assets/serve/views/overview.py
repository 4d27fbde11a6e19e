"""Overview: one brand's figures per platform and pooled over the chosen platforms, each with
its 95% interval and its change against the previous period of equal length (the query the
report shares, measure/period_figures.py), its daily trend, who labelled its sentiment, what
the AIs say of it and the untracked options offered beside it."""

from __future__ import annotations

import duckdb

from visibility_assets.judge.calibration_run import latest_calibrations
from visibility_assets.measure.discovery import COLUMNS as DISCOVERY_COLUMNS
from visibility_assets.measure.discovery import also_recommended
from visibility_assets.measure.metric_catalog import metric_catalog
from visibility_assets.measure.period_figures import period_figures
from visibility_assets.review.ledger import sentiment_headline
from visibility_assets.review.shipped_accuracy import SENTIMENT_HELD_OUT, SHIPPED_FIGURES
from visibility_assets.serve.filters import Filters
from visibility_assets.serve.views.first_screen import next_steps, ranking, tiles
from visibility_assets.serve.views.grid import Grid
from visibility_assets.warehouse.db import has_tables

# The brand's rows of the period and the one before, read from the lake once for the figures,
# the trend and the sentiment method: each lake scan costs ~10 ms of catalog queries before it
# reads a row (three scans made ~95 ms of those queries; one into this table of the cursor's own,
# ~50 ms on a 30-day warehouse).
BRAND_ROWS_TABLE = "overview_brand_rows"
BRAND_ROWS = """
CREATE OR REPLACE TEMP TABLE overview_brand_rows AS
SELECT * FROM mention_metrics
WHERE brand = $brand AND category = $category AND date BETWEEN $previous_start AND $end
  AND (len($platforms) = 0 OR list_contains($platforms, platform))
"""

TREND = """
WITH daily AS (
    SELECT date, coalesce(platform, 'all') AS platform, sum(mentioned_answers) AS mentioned,
           sum(valid_answers) AS valid
    FROM overview_brand_rows
    WHERE date >= $start
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
# lexicon, and the judge's agreement with the lexicon in the period's latest week (sentiment_agreement);
# beside them, the answers that named the brand only to say nothing is known of it, which have no
# sentiment (clean/unknown.py): the sentiment rates are over the other mentions.
SENTIMENT_METHOD = """
WITH mentions AS (
    SELECT coalesce(platform, 'all') AS platform, sum(known_mentioned_answers) AS mentioned,
           sum(judge_labelled_answers) AS judged, sum(named_unknown_answers) AS named_unknown,
           sum(review_labelled_answers) AS reviewed_sentiment, sum(reviewed_answers) AS reviewed
    FROM overview_brand_rows
    WHERE date >= $start
    GROUP BY GROUPING SETS ((platform), ())
)
SELECT platform, mentioned, judged, named_unknown, reviewed_sentiment, reviewed,
       CASE WHEN mentioned = 0 THEN NULL WHEN judged = 0 AND reviewed_sentiment = 0 THEN 'analyzer'
            WHEN judged = mentioned THEN 'judge' WHEN reviewed_sentiment = mentioned THEN 'review'
            WHEN reviewed_sentiment = 0 THEN 'judge and analyzer'
            ELSE concat_ws(', ', 'reviewers', CASE WHEN judged > 0 THEN 'judge' END,
                           CASE WHEN judged + reviewed_sentiment < mentioned THEN 'analyzer' END) END AS method
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
    """Per platform, which method labelled the mentions and, for the judge, its agreement with the
    lexicon and its latest calibration against labelled answers (reads BRAND_ROWS, made by the overview)."""
    grid = Grid.of(conn.execute(SENTIMENT_METHOD, filters.params("start")))
    agreement = {}
    if has_tables(conn, "sentiment_agreement"):
        rows = Grid.of(conn.execute(AGREEMENT, filters.params("start", "end", "platforms"))).rows
        agreement = {row["platform"]: row for row in rows}
    extra = ("judge", "week", "labelled_by_both", "agreement", "kappa")
    calibrated = {row["judge"]: row for row in latest_calibrations(conn) if row["scope"] == "all"} if agreement else {}
    rows = []
    for row in grid.rows:
        row = {**row, **{k: agreement.get(row["platform"], {}).get(k) for k in extra}}
        rows.append({**row, "calibration": calibrated.get(row["judge"])})
    return Grid(grid.columns + extra + ("calibration",), tuple(rows))


def also_offered(conn: duckdb.DuckDBPyConnection, filters: Filters) -> Grid:
    """The options of the brand's category that brands.yaml does not track, with their lines."""
    rows = also_recommended(conn, filters.category, filters.start, filters.end, filters.platforms)
    return Grid(DISCOVERY_COLUMNS, tuple(rows))


# The label each metric's figures stand on, whose measured accuracy (review/ledger.py) qualifies them.
METRIC_FIELDS = {"mention_rate": "mentioned", "share_of_voice": "mentioned", "weighted_mention_rate": "mentioned",
                 "weighted_share_of_voice": "mentioned", "avg_list_rank": "list_rank", "top1_rate": "list_rank",
                 "top3_rate": "list_rank", "recommend_rate": "recommended", "negative_rate": "recommended",
                 "positive_rate": "sentiment", "negative_sentiment_rate": "sentiment"}


def overview(conn: duckdb.DuckDBPyConnection, filters: Filters, quotes: bool = False,
             accuracy: dict | None = None, texts: dict[str, str] | None = None,
             weights: dict[str, float] | None = None) -> dict:
    """`accuracy`: the brand's accuracy ledger (review/ledger.py), shown beside the figures it
    qualifies; `texts` and `weights`: the questions' texts and demand weights, by id (the next steps)."""
    conn.execute(BRAND_ROWS, filters.params("brand", "category", "previous_start", "end", "platforms"))
    figures = Grid.of(period_figures(conn, filters.brand, filters.category, filters.start, filters.end,
                                     filters.platforms, source=BRAND_ROWS_TABLE))
    trend = Grid.of(conn.execute(TREND, filters.params("start")))
    changes = Grid.of(conn.execute(MODEL_CHANGES, filters.params("start", "end", "platforms")))
    by_metric: dict[str, dict[str, dict]] = {metric.name: {} for metric in metric_catalog()}
    for row in figures.rows:
        by_metric[row["metric"]][row["platform"]] = row
    columns = ["all"] + sorted({row["platform"] for row in figures.rows} - {"all"})
    method = sentiment_method(conn, filters)
    ledger = {}
    for entry in (accuracy or {}).get("fields", ()):
        ledger.setdefault(entry["field"], []).append(entry)
    sentiment = _sentiment_headline(method, ledger.get("sentiment", []))
    offered = also_offered(conn, filters)
    ranked, place = ranking(conn, filters)
    return {"tables": {"figures": figures, "trend": trend, "model_changes": changes,
                       "sentiment_method": method, "claims": claims(conn, filters, quotes),
                       "also_recommended": offered, "ranking": ranked,
                       "next_steps": next_steps(conn, filters, texts or {}, weights or {}, offered)},
            "tiles": tiles(figures), "place": place,
            "by_metric": by_metric, "columns": columns, "sentiment_accuracy": SENTIMENT_HELD_OUT.sentence(),
            "quotes": quotes, "reviewed": {row["platform"]: row["reviewed"] or 0 for row in method.rows},
            "sentiment_headline": sentiment,
            "accuracy": {metric: ledger.get(field, []) for metric, field in METRIC_FIELDS.items()},
            "api": {"accuracy": {metric: [entry["sentence"] for entry in ledger.get(field, [])]
                                 for metric, field in METRIC_FIELDS.items()},
                    "sentiment_headline": sentiment, "place": place}}


SENTIMENT_METRICS = ("positive_rate", "negative_sentiment_rate")


def _sentiment_headline(method: Grid, entries: list[dict]) -> dict:
    """Whether the sentiment shares are headline figures, by the accuracy of who labelled them."""
    overall = next((row for row in method.rows if row["platform"] == "all"), None) or {}
    mentioned, judged, reviewed = (overall.get(k) or 0 for k in ("mentioned", "judged", "reviewed_sentiment"))
    sources = {source for source, labelled in (("judge", judged), ("review", reviewed),
                                                ("analyzer", mentioned - judged - reviewed)) if labelled > 0}
    if not entries:  # no ledger (no reviews read): the shipped figure of the analyzer's own labels
        entries = [{"source": "analyzer", "basis": "shipped", "accuracy": SHIPPED_FIGURES["sentiment"].accuracy}]
    calibration = next((row["calibration"] for row in method.rows if row.get("calibration")), None)
    calibrated = {"judge": calibration["accuracy"]} if calibration else {}
    return sentiment_headline(entries, sources or {"analyzer"}, calibrated)

