"""The report's collection-quality panel, from fct_collection_quality."""

from __future__ import annotations

from datetime import date as Date

import duckdb

from visibility_assets.core.visible_text import html_text as escape

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
    return f"<h2>Collection quality</h2>{note}<table>{head}{body}</table>"


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
