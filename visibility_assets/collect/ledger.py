"""A partition's failures by class over all its runs and step attempts, from the ledger: the
requests that failed every retry, and the attempts that failed, each counted by error class.

A step's own report knows only its own attempt: a first attempt that tripped the breaker,
followed by a retry that succeeded, would read "failed 0". The partition's other figures
(attempts, 429s, retries, searches, cost, latency, wall time) are int_partition_requests' own,
computed for the partition by measure/partition_figures.py.
"""

from __future__ import annotations

import duckdb

FAILED_BY_CLASS = """
SELECT coalesce(last_error_class, 'unknown'), count(*) FROM collection_requests
WHERE date = $date AND platform = $platform AND state = 'failed' GROUP BY 1 ORDER BY 1
"""
ERRORS_BY_CLASS = """
SELECT error_class, count(*) FROM http_attempts
WHERE date = $date AND platform = $platform AND error_class IS NOT NULL GROUP BY 1 ORDER BY 1
"""


def failures_by_class(conn: duckdb.DuckDBPyConnection, date: str, platform: str) -> dict:
    params = {"date": date, "platform": platform}
    return {"failed_by_class": dict(conn.execute(FAILED_BY_CLASS, params).fetchall()),
            "attempt_errors_by_class": dict(conn.execute(ERRORS_BY_CLASS, params).fetchall())}
