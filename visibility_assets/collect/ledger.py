"""A partition's collection figures over all its runs and step attempts, from the ledger.

A step's own report knows only its own attempt: a first attempt that met 44 429s and tripped
the breaker, followed by a retry that succeeded, would read "failed 0, retries 0". These
figures are read from http_attempts and collection_requests after the partition is published.
"""

from __future__ import annotations

import duckdb

# Wall time: each run's span (first attempt sent to last finished), added over its runs.
ATTEMPTS = """
WITH attempts AS (SELECT * FROM http_attempts WHERE date = $date AND platform = $platform),
     runs AS (SELECT run_id, epoch(max(finished_at) - min(started_at)) AS wall_s FROM attempts GROUP BY run_id)
SELECT (SELECT count(*) FROM attempts),
       (SELECT count(*) FROM attempts WHERE http_status = 429),
       (SELECT count(*) - count(DISTINCT request_key) FROM attempts),
       (SELECT count(*) FROM runs),
       (SELECT coalesce(sum(wall_s), 0) FROM runs)
"""
FAILED_BY_CLASS = """
SELECT coalesce(last_error_class, 'unknown'), count(*) FROM collection_requests
WHERE date = $date AND platform = $platform AND state = 'failed' GROUP BY 1 ORDER BY 1
"""
# What was stored, over every run: the searches as searches_billed counts them (cost.py).
ANSWERS = """
SELECT count(*) FILTER (WHERE outcome = 'moderated'),
       coalesce(sum(coalesce(search_count, CASE WHEN search_used THEN 1 ELSE 0 END)), 0),
       sum(cost), max(currency),
       quantile_disc(latency_ms, 0.5), quantile_disc(latency_ms, 0.95)
FROM raw_ai_responses WHERE date = $date AND platform = $platform
"""
ERRORS_BY_CLASS = """
SELECT error_class, count(*) FROM http_attempts
WHERE date = $date AND platform = $platform AND error_class IS NOT NULL GROUP BY 1 ORDER BY 1
"""


def partition_totals(conn: duckdb.DuckDBPyConnection, date: str, platform: str) -> dict:
    params = {"date": date, "platform": platform}
    attempts, http_429, retries, runs, wall_s = conn.execute(ATTEMPTS, params).fetchone()
    failed = dict(conn.execute(FAILED_BY_CLASS, params).fetchall())
    moderated, searches, cost, currency, p50, p95 = conn.execute(ANSWERS, params).fetchone()
    return {"attempts": attempts, "http_429": http_429, "retries": retries, "runs": runs,
            "wall_s": round(float(wall_s), 1), "failed": sum(failed.values()), "failed_by_class": failed,
            "attempt_errors_by_class": dict(conn.execute(ERRORS_BY_CLASS, params).fetchall()),
            "moderated": moderated, "searches": int(searches), "cost": None if cost is None else round(cost, 6),
            "currency": currency, "latency_p50_ms": p50, "latency_p95_ms": p95}
