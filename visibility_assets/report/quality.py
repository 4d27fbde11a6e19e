"""The report's collection-quality panel, from fct_collection_quality."""

from __future__ import annotations

from datetime import date as Date

import duckdb

from visibility_assets.core.visible_text import html_text as escape
from visibility_assets.warehouse.db import has_tables

COLUMNS = ("platform", "config / analyzer", "requests", "success", "retries / request", "parse success",
           "moderated", "skipped (already done)", "tasks", "task wait", "replay diff", "alert latency")


def quality_rows(conn: duckdb.DuckDBPyConnection, day: Date) -> list[tuple]:
    return conn.execute(
        """SELECT platform, config_version || ' / ' || analyzer_version, requests, success_share,
                  retries_per_request, parse_success, moderation_share, skipped_already_done, tasks,
                  task_wait_s_avg, replay_diff_share, alert_latency_s
           FROM fct_collection_quality WHERE date = ? ORDER BY platform, config_version, analyzer_version""",
        [day]).fetchall()


def quality_section(conn: duckdb.DuckDBPyConnection, day: Date) -> str:
    rows = quality_rows(conn, day)
    note = ('<p class="note">How each platform\'s day was collected and analysed. Tasks are the event-driven'
            " collections (extra rounds where a change was borderline, ad-hoc questions); task wait runs from"
            " the task's planning to its first request. Replay diff is the share of answers the current"
            " analyzer reads differently (<code>visibility replay</code>); alert latency runs from the day's"
            " last answer to its alerts.</p>")
    if not rows:
        return "<h2>Collection quality</h2><p class=\"note\">No collection-quality figures for this day.</p>"
    head = "<tr>" + "".join(f"<th>{escape(c)}</th>" for c in COLUMNS) + "</tr>"
    body = "".join("<tr>" + "".join(f"<td>{_cell(i, v)}</td>" for i, v in enumerate(row)) + "</tr>" for row in rows)
    return f"<h2>Collection quality</h2>{note}<table>{head}{body}</table>{faults_section(conn, day)}"


FAULTS = """
SELECT platform, fault_class, alerts, faults, array_to_string(kinds, ', ')
FROM faults_by_class WHERE date = ? AND fault_class <> 'brand'
ORDER BY platform, list_position(['source', 'rule', 'downstream'], fault_class)
"""


def faults_section(conn: duckdb.DuckDBPyConnection, day: Date) -> str:
    """The day's failures split by whose they are: the platform's, the rules', or downstream."""
    note = ('<p class="note">Failures by whose they are: <b>source</b> the platform (down, throttling, billing,'
            " a refusal or moderation spike), <b>rule</b> the analyzer or the config (a quarantine spike, a replay"
            " diff above its limit, a model change, a missing key), <b>downstream</b> the warehouse, a webhook,"
            " the disk or the machine. Webhooks can be routed by class (events.yaml).</p>")
    if not has_tables(conn, "faults_by_class"):
        return ""
    rows = conn.execute(FAULTS, [day]).fetchall()
    if not rows:
        return f"<h3>Failures by class</h3>{note}<p class=\"note\">None this day.</p>"
    head = "<tr>" + "".join(f"<th>{c}</th>" for c in ("platform", "class", "alerts", "faults", "kinds")) + "</tr>"
    body = "".join("<tr>" + "".join(f"<td>{escape(str(v)) if v != '' else 'all'}</td>" for v in row) + "</tr>"
                   for row in rows)
    return f"<h3>Failures by class</h3>{note}<table>{head}{body}</table>"


def _cell(index: int, value) -> str:
    if value is None:
        return "–"
    if index in (3, 5, 6, 10):  # shares
        return f"{value:.1%}"
    if index == 4:
        return f"{value:.2f}"
    if index in (9, 11):  # seconds
        return f"{value:.0f} s"
    return escape(str(value))
