"""Alerts and quality: the alerts of the period with their p and q values, each with the
periods its evidence comes from (the day, and the trailing 7 days it was tested against), and
the collection-quality panel.

A category of thousands of brands has thousands of borderline changes a month: the alerts come a
page at a time, the period's alerts before its borderline changes."""

from __future__ import annotations

import duckdb

from visibility_assets.serve.filters import Filters
from visibility_assets.serve.views.grid import Grid
from visibility_assets.warehouse.db import has_tables

PAGE_ALERTS = 50

ALERTS = """
WITH found AS MATERIALIZED (
    SELECT date, platform, kind, category, subject, direction, decision, rate, rate_low, rate_high,
           baseline_rate, baseline_low, baseline_high, change, p_value, q_value, answers, baseline_answers,
           model_changed, fault_class, CAST(date - to_days(baseline_days()) AS DATE) AS baseline_from,
           CAST(date - to_days(1) AS DATE) AS baseline_to
    FROM visibility_alerts
    WHERE date BETWEEN $start AND $end
      AND (category IS NULL OR category = $category)
      AND (len($platforms) = 0 OR list_contains($platforms, platform))
)
SELECT *, (SELECT count(*) FROM found) AS alerts_found  -- not a window: answers.py says why
FROM found
ORDER BY decision = 'alert' DESC, date DESC, decision, p_value NULLS LAST, platform, subject
LIMIT $limit OFFSET $offset
"""

QUALITY = """
SELECT date, platform, requests, success_share, retries_per_request, parse_success, moderation_share,
       skipped_already_done, replay_diff_share, alerts, alert_latency_s, analyzer_version, config_version
FROM fct_collection_quality
WHERE date BETWEEN $start AND $end
  AND (len($platforms) = 0 OR list_contains($platforms, platform))
ORDER BY date DESC, platform
"""


# Failures by whose they are (faults_by_class); a fault that is no platform's ('') shows whatever the filter.
FAULTS = """
SELECT f.date, f.platform, f.fault_class, f.alerts, f.faults, f.kinds,
       (SELECT string_agg(e.detail, ' | ' ORDER BY e.occurred_at) FROM fault_events AS e
        WHERE e.date = f.date AND coalesce(e.platform, '') = f.platform AND e.fault_class = f.fault_class) AS details
FROM faults_by_class AS f
WHERE f.date BETWEEN $start AND $end AND f.fault_class <> 'brand'
  AND (len($platforms) = 0 OR f.platform = '' OR list_contains($platforms, f.platform))
ORDER BY f.date DESC, f.platform, list_position(['source', 'rule', 'downstream'], f.fault_class)
"""


FAULT_COLUMNS = ("date", "platform", "fault_class", "alerts", "faults", "kinds", "details")


def alerts(conn: duckdb.DuckDBPyConnection, filters: Filters, offset: int = 0, limit: int = PAGE_ALERTS) -> dict:
    page = Grid.of(conn.execute(ALERTS, {**filters.params("category", "start", "end", "platforms"),
                                         "limit": limit, "offset": offset}))
    found = page.rows[0]["alerts_found"] if page.rows else 0
    tables = {
        "alerts": page.without("alerts_found"),
        "quality": Grid.of(conn.execute(QUALITY, filters.params("start", "end", "platforms"))),
    }
    tables["faults"] = (Grid.of(conn.execute(FAULTS, filters.params("start", "end", "platforms")))
                        if has_tables(conn, "faults_by_class", "fault_events") else Grid(FAULT_COLUMNS, ()))
    paging = {"alerts_found": found, "offset": offset, "limit": limit}
    return {"tables": tables, **paging, "api": paging}
