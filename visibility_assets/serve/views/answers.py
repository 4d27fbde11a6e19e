"""Answers: the answers behind a cell (a brand, a period, platforms, optionally one question),
each with the brand's result, every alias match of the answer (accepted or rejected, with the
rule that decided), the sentiment cue words, the citations and the provenance down to the
HTTP attempts, as `visibility explain` gives it. Answer text: analysts and admins only."""

from __future__ import annotations

import duckdb

from visibility_assets.serve.filters import Filters
from visibility_assets.serve.views.grid import Grid

PAGE = 50

# The page's answers first, from the narrow tables (no text); then the texts of those alone.
# The cell's answers are those of the category in the partitions cleaned while the brand was
# tracked (its mention_metrics rows: the metrics' denominator); brand_mentions holds those that
# name it. `named` is a literal condition, not a parameter, so that the scan can filter on it.
PAGE_KEYS = """
WITH tracked AS (
    SELECT date, platform FROM mention_metrics
    WHERE brand = $brand AND category = $category AND date BETWEEN $start AND $end
),
naming AS (
    SELECT request_key FROM brand_mentions
    WHERE brand = $brand AND category = $category AND date BETWEEN $start AND $end
),
cell AS MATERIALIZED (
    SELECT s.request_key, s.date, s.platform, s.question_id, s.round
    FROM stg_samples AS s
    SEMI JOIN tracked USING (date, platform)
    WHERE s.category = $category AND s.date BETWEEN $start AND $end
      AND (len($platforms) = 0 OR list_contains($platforms, s.platform))
      AND ($question IS NULL OR s.question_id = $question)
"""
NAMED_CONDITION = {"all": "", "yes": "      AND s.request_key IN (SELECT request_key FROM naming)\n",
                   "no": "      AND s.request_key NOT IN (SELECT request_key FROM naming)\n",
                   "against": "      AND s.request_key IN (SELECT request_key FROM brand_mentions WHERE brand = $brand"
                              " AND category = $category AND date BETWEEN $start AND $end AND recommended = false)\n"}
# every answer of the cell, those naming the brand, those that do not, those that advise against it
NAMED = tuple(NAMED_CONDITION)
# The total is a scalar subquery, not a window count over every row: DuckDB's parallel window
# count races (duckdb/duckdb#22846, #25713: an internal error that invalidates the database
# until the process restarts; tests/test_layers.py refuses such a window).
PAGE_ORDER = """
)
SELECT request_key, date, platform, question_id, round, (SELECT count(*) FROM cell) AS total
FROM cell
ORDER BY date, platform, question_id, round, request_key
LIMIT $limit OFFSET $offset
"""

ANSWERS = """
SELECT r.request_key, r.date, r.platform, r.question_id, r.question_text, r.round, r.model, r.response_model,
       r.content_hash, r.prompt_hash, r.attempt, r.run_id AS collection_run_id, r.outcome, r.finish_reason,
       r.answer_text, s.valid, s.invalid_reason, s.option_list_kind, s.analyzer_version, s.config_version,
       s.run_id AS cleaning_run_id, b.request_key IS NOT NULL AS mentioned, coalesce(b.mention_count, 0) AS mention_count,
       b.first_mention_order, b.list_rank, b.recommended, b.sentiment, coalesce(b.cites_own_domain, false) AS cites_own_domain
FROM raw_ai_responses AS r
JOIN cleaned_samples AS s USING (request_key)
LEFT JOIN brand_mentions AS b
    ON b.request_key = r.request_key AND b.brand = $brand AND b.date BETWEEN $first AND $last
WHERE list_contains($keys, r.request_key) AND r.date BETWEEN $first AND $last AND s.date BETWEEN $first AND $last
  AND list_contains($platforms, r.platform)
"""

MATCHES = """
SELECT request_key, brand, alias, matched_text, start_pos, end_pos, accepted, rule, sentiment, sentiment_cues
FROM entity_matches
WHERE list_contains($keys, request_key) AND date BETWEEN $first AND $last AND list_contains($platforms, platform)
ORDER BY request_key, start_pos, brand
"""

CITATIONS = """
SELECT request_key, url, source, domain, domain_class, own_brand
FROM sample_citations
WHERE list_contains($keys, request_key) AND date BETWEEN $first AND $last AND list_contains($platforms, platform)
ORDER BY request_key, url
"""

ATTEMPTS = """
SELECT request_key, attempt, run_id, started_at, http_status, error_class, latency_ms
FROM http_attempts
WHERE list_contains($keys, request_key) AND date BETWEEN $first AND $last AND list_contains($platforms, platform)
ORDER BY request_key, attempt
"""


def answers(conn: duckdb.DuckDBPyConnection, filters: Filters, question: str | None = None, named: str = "all",
            offset: int = 0, limit: int = PAGE) -> dict:
    scope = filters.params("brand", "category", "start", "end", "platforms")
    page = conn.execute(PAGE_KEYS + NAMED_CONDITION[named] + PAGE_ORDER,
                        {**scope, "question": question, "limit": limit, "offset": offset}).fetchall()
    total = page[0][-1] if page else 0
    listing, items = answer_items(conn, [(key, day, platform) for key, day, platform, *_ in page], filters.brand,
                                  filters.start)
    return {"tables": {"answers": listing}, "answers": items, "total": total, "offset": offset, "limit": limit,
            "api": {"total": total, "offset": offset, "limit": limit, "answers": items}}


def answer_items(conn: duckdb.DuckDBPyConnection, keys: list[tuple], brand: str,
                 default_day) -> tuple[Grid, list[dict]]:
    """The answers `keys` ((request_key, date, platform), in the order wanted) with the brand's
    result, their alias matches, citations and HTTP attempts. Only their days and platforms are
    read for the texts, matches and attempts."""
    order = {key: i for i, (key, *_) in enumerate(keys)}
    span = {"keys": list(order), "first": min((d for _, d, _ in keys), default=default_day),
            "last": max((d for _, d, _ in keys), default=default_day),
            "platforms": sorted({p for _, _, p in keys})}
    rows = Grid.of(conn.execute(ANSWERS, {**span, "brand": brand}))
    listing = Grid(rows.columns, tuple(sorted(rows.rows, key=lambda row: order[row["request_key"]])))
    related = {name: _by_key(Grid.of(conn.execute(sql, span)))
               for name, sql in (("matches", MATCHES), ("citations", CITATIONS), ("attempts", ATTEMPTS))}
    return listing, [{**row, **{name: found.get(row["request_key"], []) for name, found in related.items()}}
                     for row in listing.rows]


def _by_key(grid: Grid) -> dict[str, list[dict]]:
    found: dict[str, list[dict]] = {}
    for row in grid.rows:
        found.setdefault(row["request_key"], []).append({k: v for k, v in row.items() if k != "request_key"})
    return found
