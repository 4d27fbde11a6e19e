"""The report's "Also recommended": brands the AIs offer as options that brands.yaml does not
track, per category, with the brands.yaml lines that would track them."""

from __future__ import annotations

from datetime import date as Date

import duckdb

from visibility_assets.core.visible_text import html_text as escape
from visibility_assets.measure.discovery import also_recommended

TOP = 8


def untracked_section(conn: duckdb.DuckDBPyConnection, day: Date) -> str:
    rows = also_recommended(conn, None, day, day, top=TOP)
    title = "<h2>Also recommended: brands you do not track</h2>"
    if not rows:
        return title + '<p class="note">No answer of this day offered an option outside brands.yaml.</p>'
    note = ('<p class="note">Names the valid answers offer as options (list items, table rows, per-option headings,'
            " bold leads) that match no alias of brands.yaml, all platforms pooled: the answers offering each, over"
            " the category's valid answers (95% Wilson interval), its best list rank, and the first day any platform"
            " offered it. To track one, copy its line into brands.yaml (add its other aliases first).</p>")
    head = ("<tr><th>category</th><th>name</th><th>answers offering it (95% CI)</th><th>best rank</th>"
            "<th>platforms</th><th>first seen</th></tr>")
    body = "".join(
        f"<tr><td>{escape(r['category'])}</td><td>{escape(r['name'])}</td>"
        f"<td>{r['answers']} of {r['valid_answers']}: {r['share']:.0%} ({r['share_low']:.0%}-{r['share_high']:.0%})</td>"
        f"<td>{r['best_rank']}</td><td>{escape(r['platforms'])}</td>"
        f"<td>{r['first_seen'].isoformat()}{' <b>new</b>' if r['first_seen'] == day else ''}</td></tr>"
        for r in rows)
    lines = escape("\n".join(r["brands_yaml"] for r in rows))
    return (f"{title}{note}<table>{head}{body}</table>"
            f'<p class="note">brands.yaml lines:</p><pre class="brands-yaml">{lines}</pre>')
