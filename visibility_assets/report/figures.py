"""The report's key figures: for each brand it is for (brands.yaml's own brands), the period's
figures per platform and pooled over them, each with its 95% interval and its change against
the previous period of equal length. They come from the query the workspace's overview reads
(measure/period_figures.py), so a period in the report is the same computation as in the
workspace; each cell carries its exact value in `data-value` for whoever reads the file by machine."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import date

import duckdb

from visibility_assets.core.visible_text import html_text as escape
from visibility_assets.measure.change_rule import change_rule
from visibility_assets.measure.metric_catalog import metric_catalog
from visibility_assets.measure.period_figures import period_figures


def figures_section(conn: duckdb.DuckDBPyConnection, brands: Sequence[tuple[str, str]], start: date, end: date,
                    platforms: Sequence[str] = ()) -> str:
    """One table per (brand, category) of `brands`; nothing when there is none."""
    if not brands:
        return ""
    rule = change_rule()
    days = (end - start).days + 1
    period = (f"{end.isoformat()}, against the day before" if days == 1
              else f"{start.isoformat()} to {end.isoformat()}, against the {days} days before")
    parts = ["<h2>Key figures</h2>",
             f'<p class="note">{period}. Each rate pools the period\'s answers and is shown with its 95% Wilson'
             " interval (the rank:"
             f" a normal interval). ▲ or ▼ marks a change the alerts' test finds clear (p &lt; {rule.clear_p} and"
             f" q ≤ {rule.clear_q:.2f} over the brand's tests).</p>"]
    for brand, category in brands:
        parts += [f"<h3>{escape(brand)} <span class=\"note\">({escape(category)})</span></h3>",
                  _brand_table(conn, brand, category, start, end, platforms)]
    return "".join(parts)


def _brand_table(conn, brand: str, category: str, start: date, end: date, platforms: Sequence[str]) -> str:
    cursor = period_figures(conn, brand, category, start, end, tuple(platforms))
    names = [d[0] for d in cursor.description]
    cells: dict[tuple[str, str], dict] = {}
    for values in cursor.fetchall():
        row = dict(zip(names, values))
        cells[(row["metric"], row["platform"])] = row
    if not cells:
        return '<p class="note">No answers in this period.</p>'
    columns = ["all"] + sorted({platform for _, platform in cells} - {"all"})
    head = "".join(f"<th>{'all platforms' if c == 'all' else escape(c)}</th>" for c in columns)
    body = []
    for metric in metric_catalog():
        row = "".join(_cell(metric.name, c, cells.get((metric.name, c))) for c in columns)
        body.append(f"<tr><th scope=\"row\">{escape(metric.label)}</th>{row}</tr>")
    return (f'<table class="figures" data-brand="{escape(brand)}" data-category="{escape(category)}">'
            f"<tr><th>Figure</th>{head}</tr>{''.join(body)}</table>")


def _cell(metric: str, platform: str, row: dict | None) -> str:
    if row is None or row["value"] is None:
        return f'<td data-metric="{metric}" data-platform="{escape(platform)}">–</td>'
    shown = _number(metric, row["value"])
    interval = f"{_number(metric, row['low'])}–{_number(metric, row['high'])}" if row["low"] is not None else ""
    mark = ""
    if row["significant"]:
        mark = ' <span class="up">▲</span>' if row["change"] > 0 else ' <span class="down">▼</span>'
    return (f'<td data-metric="{metric}" data-platform="{escape(platform)}" data-value="{row["value"]!r}">'
            f'{shown} <span class="note interval">{interval}</span>{mark}</td>')


def _number(metric: str, value: float) -> str:
    return f"{value:.2f}" if metric == "avg_list_rank" else f"{value * 100:.1f}%"
