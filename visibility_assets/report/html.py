"""The daily report: one static HTML file a brand manager can open without a server."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import date as Date
from datetime import timedelta

import duckdb

from visibility_assets.measure.change_rule import change_rule
from visibility_assets.measure.metric_catalog import share
from visibility_assets.core.visible_text import html_text as escape
from visibility_assets.report.charts import REASON_COLOURS, interval_chart, line_chart, stacked_bars
from visibility_assets.report.figures import figures_section
from visibility_assets.report.quality import quality_section
from visibility_assets.report.accuracy import accuracy_section
from visibility_assets.report.sentiment import sentiment_method_note
from visibility_assets.review.store import Review
from visibility_assets.report.sources import sources_section
from visibility_assets.report.untracked import untracked_section
from visibility_assets.warehouse.lake import one_snapshot

TREND_DAYS = 30
ALERT_DAYS = 7

STYLE = """
body { font-family: -apple-system, "Segoe UI", "PingFang SC", "Noto Sans CJK SC", sans-serif; margin: 24px;
       color: #111827; max-width: 1100px; }
h1 { font-size: 22px; } h2 { font-size: 18px; margin-top: 32px; border-bottom: 1px solid #e5e7eb; }
h3 { font-size: 15px; margin-bottom: 4px; } .note { color: #4b5563; font-size: 13px; }
table { border-collapse: collapse; font-size: 13px; } td, th { border: 1px solid #e5e7eb; padding: 4px 8px; }
th { background: #f9fafb; text-align: left; } .up { color: #16a34a; } .down { color: #dc2626; }
.interval { white-space: nowrap; }
pre.brands-yaml { background: #f9fafb; border: 1px solid #e5e7eb; padding: 8px; font-size: 12px; overflow-x: auto; }
"""


def latest_date(conn: duckdb.DuckDBPyConnection) -> Date | None:
    return conn.execute("SELECT max(date) FROM mention_metrics").fetchone()[0]


def render_report(conn: duckdb.DuckDBPyConnection, day: Date, start: Date | None = None,
                  brands: Sequence[tuple[str, str]] = (), platforms: Sequence[str] = (),
                  reviews: Sequence[Review] = ()) -> str:
    """The report of the period `start` (default: `day`) to `day`: the key figures of `brands`
    ((name, category) pairs) and the rates per platform pooled over the period, on the chosen
    platforms (none: every one); the trends end on `day`, and the sections on sources, untracked
    options, invalid answers and collection quality are of `day` itself. The connection needs the
    models' macros (create_macros). Every section reads one snapshot of the lake. `reviews`: the
    analysts' reviews (review/store.py), for the accuracy ledger."""
    with one_snapshot(conn):
        return _render(conn, day, start or day, brands, list(platforms), list(reviews))


def _render(conn: duckdb.DuckDBPyConnection, day: Date, start: Date, brands: Sequence[tuple[str, str]],
            chosen: list[str], reviews: list[Review]) -> str:
    platforms = [p for (p,) in conn.execute(
        "SELECT DISTINCT platform FROM mention_metrics WHERE date BETWEEN ? AND ?"
        " AND (len(?) = 0 OR list_contains(?, platform)) ORDER BY platform", [start, day, chosen, chosen]).fetchall()]
    categories = [c for (c,) in conn.execute(
        "SELECT DISTINCT category FROM mention_metrics WHERE date BETWEEN ? AND ? ORDER BY category",
        [start, day]).fetchall()]
    versions = conn.execute("SELECT DISTINCT config_version, analyzer_version FROM mention_metrics"
                            " WHERE date BETWEEN ? AND ? ORDER BY ALL", [start, day]).fetchall()
    period = day.isoformat() if start == day else f"{start.isoformat()} to {day.isoformat()}"
    sections = [
        f"<h1>AI visibility report — {period}</h1>",
        f'<p class="note">{len(platforms)} platforms, {len(categories)} categories. Every rate is over valid answers'
        " and shown with its 95% Wilson interval. Share of voice compares a brand with the other tracked brands of"
        " its category (the comparison set is the category). Config/analyzer versions: "
        + escape(", ".join(f"{c} / {a}" for c, a in versions)) + "</p>",
        figures_section(conn, brands, start, day, chosen),
        "<h2>Mention rate per platform</h2>",
        '<p class="note">Dot: the share of valid answers that name the brand; bar: 95% interval. Overlapping bars'
        " mean the platforms cannot be told apart on this period's sample.</p>",
    ]
    for category in categories:
        sections += [f"<h3>{escape(category)}</h3>", _rate_chart(conn, start, day, category, platforms)]
    sections.append("<h2>Share of voice per category</h2>")
    for category in categories:
        sections += [f"<h3>{escape(category)}</h3>", _share_chart(conn, start, day, category, platforms)]
    sections.append(f"<h2>Trend: mention rate over {TREND_DAYS} days (all platforms pooled)</h2>")
    for category in categories:
        sections += [f"<h3>{escape(category)}</h3>", _trend_chart(conn, day, category)]
    sections += [
        "<h2>How each AI speaks of each brand</h2>",
        sentiment_method_note(conn, day),
        accuracy_section(conn, reviews),
        '<p class="note">Of the answers that name a brand, the share whose sentences about it are positive, and'
        " the share negative (a brand both praised and criticised counts as neutral). Dot: the share; bar: its"
        " 95% interval, which covers the sampling error only, not the labels' own errors above.</p>"]
    for category in categories:
        sections += [f"<h3>{escape(category)}</h3>", '<p class="note">Positive share of mentions</p>',
                     _rate_chart(conn, start, day, category, platforms, "positive_rate"),
                     '<p class="note">Negative share of mentions</p>',
                     _rate_chart(conn, start, day, category, platforms, "negative_sentiment_rate"),
                     '<p class="note">Positive share, 30-day trend (all platforms pooled)</p>',
                     _trend_chart(conn, day, category, "positive_rate")]
    sections += [untracked_section(conn, day), sources_section(conn, day)]
    sections += ["<h2>Alerts (last 7 days)</h2>", _alerts_table(conn, day),
                 "<h2>Invalid answers per platform</h2>",
                 '<p class="note">Share of all answers that were refusals, error text, empty or irrelevant, cut'
                 " off at the length limit (truncated), or stopped by the platform's content moderation.</p>",
                 _invalid_chart(conn, day), _moderation_table(conn, day), quality_section(conn, day)]
    return (f"<!DOCTYPE html><html lang=\"zh\"><head><meta charset=\"utf-8\"><title>AI visibility {day}</title>"
            f"<style>{STYLE}</style></head><body>{''.join(sections)}</body></html>")


def _rate_chart(conn, start: Date, end: Date, category: str, platforms: list[str], name: str = "mention_rate") -> str:
    rate = share(name)  # its names are the catalog's, checked as identifiers when it was read
    rows = conn.execute(
        "WITH pooled AS (SELECT brand, platform, sum(" + rate.numerator + ") AS x, sum(" + rate.denominator + ") AS n"
        " FROM mention_metrics WHERE date BETWEEN ? AND ? AND category = ? AND list_contains(?, platform)"
        " GROUP BY brand, platform HAVING n > 0)"
        " SELECT brand, platform, w.rate, w.low, w.high FROM (SELECT *, wilson(x, n) AS w FROM pooled)"
        " ORDER BY brand, platform", [start, end, category, platforms]).fetchall()
    by_brand: dict[str, dict] = {}
    for brand, platform, value, low, high in rows:
        by_brand.setdefault(brand, {})[platform] = (value, low, high)
    ordered = sorted(by_brand, key=lambda b: -sum((v[0] or 0) for v in by_brand[b].values()))
    return interval_chart([{"label": b, "points": by_brand[b]} for b in ordered], platforms,
                          f"{rate.label.lower()} per platform, {category}")


def _share_chart(conn, start: Date, end: Date, category: str, platforms: list[str]) -> str:
    voice = share("share_of_voice")
    rows = conn.execute(
        "SELECT platform, brand, sum(" + voice.numerator + ") / nullif(sum(" + voice.denominator + "), 0)"
        " FROM mention_metrics WHERE date BETWEEN ? AND ? AND category = ? AND list_contains(?, platform)"
        " GROUP BY platform, brand ORDER BY platform, brand", [start, end, category, platforms]).fetchall()
    brands = sorted({b for _, b, _ in rows})
    by_platform: dict[str, dict] = {}
    for platform, brand, value in rows:
        by_platform.setdefault(platform, {})[brand] = value
    return stacked_bars([{"label": p, "values": v} for p, v in by_platform.items()], brands,
                        f"share of voice, {category}")


def _trend_chart(conn, day: Date, category: str, name: str = "mention_rate") -> str:
    rate = share(name)  # mention_metrics has its rate as NAME, NAME_low and NAME_high
    start = day - timedelta(days=TREND_DAYS - 1)
    rows = conn.execute(
        "SELECT date, brand, sum(" + rate.numerator + ") / nullif(sum(" + rate.denominator + "), 0)"
        " FROM mention_metrics WHERE category = ? AND date BETWEEN ? AND ?"
        " GROUP BY date, brand ORDER BY date", [category, start, day]).fetchall()
    dates = [(start + timedelta(days=i)).isoformat() for i in range(TREND_DAYS)]
    index = {d: i for i, d in enumerate(dates)}
    lines: dict[str, list] = {}
    for date, brand, value in rows:
        lines.setdefault(brand, [None] * TREND_DAYS)[index[date.isoformat()]] = value
    return line_chart(dates, dict(sorted(lines.items())), f"{TREND_DAYS}-day trend of the {rate.label.lower()}, {category}",
                      model_changes(conn, start, day))


def model_changes(conn, start: Date, end: Date) -> dict[str, str]:
    """The days a platform changed its model (fct_model_changes), as trend marks."""
    rows = conn.execute("SELECT date, string_agg(DISTINCT platform, ', ' ORDER BY platform) FROM fct_model_changes"
                        " WHERE flagged AND date BETWEEN ? AND ? GROUP BY date", [start, end]).fetchall()
    return {day.isoformat(): f"model change: {platforms}" for day, platforms in rows}


def _alerts_table(conn, day: Date) -> str:
    rule = change_rule()
    rows = conn.execute(
        """SELECT date, platform, kind, coalesce(category, ''), subject, direction, rate, rate_low, rate_high,
                  baseline_rate, baseline_low, baseline_high, p_value, q_value,
                  decision || CASE WHEN model_changed AND kind <> 'model_change' THEN ' (model changed that day)'
                                   ELSE '' END
           FROM visibility_alerts WHERE date BETWEEN ? AND ? ORDER BY date DESC, decision, p_value""",
        [day - timedelta(days=ALERT_DAYS - 1), day]).fetchall()
    if not rows:
        return (f'<p class="note">No alerts: no brand or platform moved against its {rule.baseline_days}-day baseline'
                f" by more than chance explains (two-proportion test, p &lt; {rule.kept_p:g}).</p>")
    head = ("<tr><th>date</th><th>platform</th><th>what</th><th>category</th><th>subject</th><th>change</th>"
            f"<th>now (95% CI)</th><th>{rule.baseline_days}-day baseline (95% CI)</th><th>p</th><th>q (BH)</th>"
            "<th>decision</th></tr>")
    body = "".join(
        f"<tr><td>{d}</td><td>{escape(p)}</td><td>{escape(k)}</td><td>{escape(c)}</td><td>{escape(s)}</td>"
        f'<td class="{direction}">{"▲" if direction == "up" else "▼"} {rate - base:+.0%}</td>'
        f"<td>{rate:.0%} ({lo:.0%}-{hi:.0%})</td><td>{base:.0%} ({blo:.0%}-{bhi:.0%})</td><td>{pv:.1e}</td>"
        f"<td>{'–' if qv is None else f'{qv:.2f}'}</td><td>{escape(decision)}</td></tr>"
        for d, p, k, c, s, direction, rate, lo, hi, base, blo, bhi, pv, qv, decision in rows)
    note = (f'<p class="note">alert: p &lt; {rule.clear_p:g} and q &le; {rule.clear_q:.2f}, a clear change.'
            f" borderline: p &lt; {rule.kept_p:g} but not clear yet; the platform is asked that category's"
            " questions for extra rounds that day (collection_tasks).</p>")
    return f"<table>{head}{body}</table>{note}"


def _moderation_table(conn, day: Date) -> str:
    """Each platform's moderation share with its 95% interval: a fact about the platform."""
    # A day without moderation has no 'moderated' row; its share is still 0 of n, with an interval.
    rows = conn.execute(
        "SELECT platform, moderated, answers, moderated / answers, wilson_low(moderated, answers),"
        " wilson_high(moderated, answers)"
        " FROM (SELECT platform, coalesce(sum(answers) FILTER (reason = 'moderated'), 0) AS moderated,"
        "       sum(answers) AS answers FROM fct_invalid_answers WHERE date = ? GROUP BY platform)"
        " ORDER BY platform", [day]).fetchall()
    head = "<tr><th>platform</th><th>moderated</th><th>answers</th><th>share (95% interval)</th></tr>"
    body = "".join(f"<tr><td>{escape(p)}</td><td>{m}</td><td>{n}</td><td>{s:.1%} ({lo:.1%}-{hi:.1%})</td></tr>"
                   for p, m, n, s, lo, hi in rows)
    return f"<h3>Moderation</h3><table>{head}{body}</table>"


def _invalid_chart(conn, day: Date) -> str:
    rows = conn.execute("SELECT platform, reason, share FROM fct_invalid_answers WHERE date = ? AND reason <> 'valid'"
                        " ORDER BY platform", [day]).fetchall()
    by_platform: dict[str, dict] = {}
    for platform, reason, share in rows:
        by_platform.setdefault(platform, {})[reason] = share
    return stacked_bars([{"label": p, "values": v} for p, v in sorted(by_platform.items())],
                        list(REASON_COLOURS), "invalid answers per platform", REASON_COLOURS)
