"""Questions: per question and platform, how many valid answers name the brand, its best and
mean list rank, and which other brands those answers name and recommend; and the gaps:
questions whose answers (over the chosen platforms) name competitors but never the brand."""

from __future__ import annotations

import duckdb

from visibility_assets.serve.filters import Filters
from visibility_assets.serve.views.grid import Grid

PER_QUESTION = """
WITH answers AS (  -- the category's valid answers in the partitions cleaned while the brand was tracked
    SELECT s.question_id, s.platform, s.request_key
    FROM stg_samples AS s
    SEMI JOIN (SELECT date, platform FROM mention_metrics
               WHERE brand = $brand AND category = $category AND date BETWEEN $start AND $end) USING (date, platform)
    WHERE s.category = $category AND s.valid AND s.date BETWEEN $start AND $end
      AND (len($platforms) = 0 OR list_contains($platforms, s.platform))
),
mentions AS (
    SELECT a.question_id, a.platform, m.request_key, m.brand, m.list_rank, m.recommended
    FROM brand_mentions AS m
    JOIN answers AS a USING (request_key)
    WHERE m.category = $category AND m.date BETWEEN $start AND $end
),
others AS (
    SELECT question_id, platform, brand, count(*) AS naming, count(*) FILTER (WHERE recommended) AS recommending
    FROM mentions
    WHERE brand <> $brand
    GROUP BY ALL
),
other_lists AS (
    SELECT question_id, platform,
           list({'brand': brand, 'answers': recommending} ORDER BY recommending DESC, brand)
               FILTER (WHERE recommending > 0) AS recommended,
           list({'brand': brand, 'answers': naming} ORDER BY naming DESC, brand) AS named
    FROM others
    GROUP BY ALL
),
own AS (
    SELECT a.question_id, a.platform, count(*) AS answers, count(m.request_key) AS naming,
           min(m.list_rank) AS best_rank, avg(m.list_rank) AS avg_rank,
           count(*) FILTER (WHERE m.recommended) AS recommending
    FROM answers AS a
    LEFT JOIN mentions AS m ON m.request_key = a.request_key AND m.brand = $brand
    GROUP BY ALL
)
SELECT o.question_id, o.platform, o.answers, o.naming, o.naming / o.answers AS mention_rate, o.best_rank,
       o.avg_rank, o.recommending, coalesce(l.recommended, []) AS others_recommended,
       coalesce(l.named, []) AS others_named
FROM own AS o
LEFT JOIN other_lists AS l USING (question_id, platform)
ORDER BY o.question_id, o.platform
"""


def questions(conn: duckdb.DuckDBPyConnection, filters: Filters, texts: dict[str, str]) -> dict:
    """`texts`: each question's text, by id (the config's)."""
    rows = conn.execute(PER_QUESTION, filters.params("brand", "category", "start", "end", "platforms")).fetchall()
    columns = ("question_id", "question", "platform", "answers", "naming", "mention_rate", "best_rank", "avg_rank",
               "recommending", "others_recommended")
    per_question = tuple({"question_id": q, "question": texts.get(q, ""), "platform": p, "answers": n,
                          "naming": naming, "mention_rate": rate, "best_rank": best, "avg_rank": mean,
                          "recommending": recommending, "others_recommended": _listed(recommended)}
                         for q, p, n, naming, rate, best, mean, recommending, recommended, _ in rows)
    return {"tables": {"questions": Grid(columns, per_question), "gaps": _gaps(rows, texts)}}


def _gaps(rows: list[tuple], texts: dict[str, str]) -> Grid:
    """Questions whose answers name no brand but competitors, pooled over the platforms."""
    pooled: dict[str, dict] = {}
    for question, _, answers, naming, *_, named in rows:
        entry = pooled.setdefault(question, {"answers": 0, "naming": 0, "competitors": {}})
        entry["answers"] += answers
        entry["naming"] += naming
        for item in named:
            entry["competitors"][item["brand"]] = entry["competitors"].get(item["brand"], 0) + item["answers"]
    gaps = [{"question_id": q, "question": texts.get(q, ""), "answers": e["answers"],
             "competitor_mentions": sum(e["competitors"].values()),
             "competitors_named": _listed([{"brand": b, "answers": n} for b, n in sorted(
                 e["competitors"].items(), key=lambda item: (-item[1], item[0]))])}
            for q, e in pooled.items() if e["naming"] == 0 and e["competitors"]]
    gaps.sort(key=lambda g: (-g["competitor_mentions"], g["question_id"]))
    return Grid(("question_id", "question", "answers", "competitor_mentions", "competitors_named"), tuple(gaps))


def _listed(items: list[dict]) -> list[str]:
    return [f"{item['brand']} ({item['answers']})" for item in items]
