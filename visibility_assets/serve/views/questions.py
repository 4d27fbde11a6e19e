"""Questions: per question and platform, how many valid answers name the brand, its best and
mean list rank, and which other brands those answers recommend; and the gaps: questions whose
answers name competitors but never the brand."""

from __future__ import annotations

import duckdb

from visibility_assets.serve.filters import Filters
from visibility_assets.serve.views.grid import Grid

RESULTS = """
SELECT s.question_id, b.platform, b.request_key, b.brand, b.mentioned, b.list_rank, b.recommended
FROM stg_brand_results AS b
JOIN stg_samples AS s USING (request_key)
WHERE b.category = $category AND b.date BETWEEN $start AND $end AND b.valid
  AND s.date BETWEEN $start AND $end
  AND (len($platforms) = 0 OR list_contains($platforms, b.platform))
"""

PER_QUESTION = """
WITH results AS (""" + RESULTS + """),
others AS (
    SELECT question_id, platform, brand, count(*) AS answers
    FROM results
    WHERE recommended AND brand <> $brand
    GROUP BY ALL
),
other_lists AS (
    SELECT question_id, platform, list(brand || ' (' || answers || ')' ORDER BY answers DESC, brand) AS recommended
    FROM others
    GROUP BY ALL
),
own AS (
    SELECT question_id, platform, count(*) AS answers,
           count(*) FILTER (WHERE mentioned) AS naming,
           min(list_rank) AS best_rank, avg(list_rank) AS avg_rank,
           count(*) FILTER (WHERE recommended) AS recommending
    FROM results
    WHERE brand = $brand
    GROUP BY ALL
)
SELECT o.question_id, o.platform, o.answers, o.naming, o.naming / o.answers AS mention_rate, o.best_rank,
       o.avg_rank, o.recommending, coalesce(l.recommended, []) AS others_recommended
FROM own AS o
LEFT JOIN other_lists AS l USING (question_id, platform)
ORDER BY o.question_id, o.platform
"""

GAPS = """
WITH results AS (""" + RESULTS + """),
per_question AS (
    SELECT question_id,
           count(DISTINCT request_key) AS answers,
           count(*) FILTER (WHERE brand = $brand AND mentioned) AS naming_brand,
           count(DISTINCT request_key) FILTER (WHERE brand <> $brand AND mentioned) AS naming_competitors
    FROM results
    GROUP BY question_id
),
named AS (
    SELECT question_id, brand, count(*) AS answers
    FROM results
    WHERE mentioned AND brand <> $brand
    GROUP BY ALL
)
SELECT q.question_id, q.answers, q.naming_competitors,
       (SELECT list(n.brand || ' (' || n.answers || ')' ORDER BY n.answers DESC, n.brand)
        FROM named AS n WHERE n.question_id = q.question_id) AS competitors_named
FROM per_question AS q
WHERE q.naming_brand = 0 AND q.naming_competitors > 0
ORDER BY q.naming_competitors DESC, q.question_id
"""


def questions(conn: duckdb.DuckDBPyConnection, filters: Filters, texts: dict[str, str]) -> dict:
    """`texts`: each question's text, by id (the config's)."""
    params = filters.params("brand", "category", "start", "end", "platforms")
    per_question = _with_text(Grid.of(conn.execute(PER_QUESTION, params)), texts)
    gaps = _with_text(Grid.of(conn.execute(GAPS, params)), texts)
    return {"tables": {"questions": per_question, "gaps": gaps}}


def _with_text(grid: Grid, texts: dict[str, str]) -> Grid:
    columns = (grid.columns[0], "question", *grid.columns[1:])
    return Grid(columns, tuple({**row, "question": texts.get(row["question_id"], "")} for row in grid.rows))
