"""The report's "Where each AI gets its facts": each platform's most cited domains, from cited_domains."""

from __future__ import annotations

from datetime import date as Date

import duckdb

from visibility_assets.core.visible_text import html_text as escape

TOP = 6
TOP_DOMAINS = """
WITH week AS (
    SELECT platform, domain, source, avg(share) AS share
    FROM cited_domains WHERE date BETWEEN $day - INTERVAL 7 DAY AND $day - INTERVAL 1 DAY
    GROUP BY ALL
),
today AS (
    SELECT platform, domain, source, domain_class, own_brand, share, share_low, share_high, brands_mentioned,
           row_number() OVER (PARTITION BY platform ORDER BY share DESC, domain, source) AS place
    FROM cited_domains WHERE date = $day
)
SELECT t.platform, t.domain, t.source, t.domain_class, t.own_brand, t.share, t.share_low, t.share_high,
       t.share - w.share AS change, len(t.brands_mentioned)
FROM today AS t LEFT JOIN week AS w USING (platform, domain, source)
WHERE t.place <= $top
ORDER BY t.platform, t.place
"""
CLASS_MIX = """
SELECT platform, domain_class, max(class_share) AS share
FROM cited_domains WHERE date = $day
GROUP BY ALL ORDER BY platform, share DESC
"""


def sources_section(conn: duckdb.DuckDBPyConnection, day: Date) -> str:
    rows = conn.execute(TOP_DOMAINS, {"day": day, "top": TOP}).fetchall()
    if not rows:
        return ("<h2>Where each AI gets its facts</h2><p class=\"note\">No cited sources on this day (no"
                " platform searched, and no answer linked a source).</p>")
    mix: dict[str, list[str]] = {}
    for platform, domain_class, share in conn.execute(CLASS_MIX, {"day": day}).fetchall():
        mix.setdefault(platform, []).append(f"{escape(domain_class)} {share:.0%}")
    head = ("<tr><th>platform</th><th>domain</th><th>class</th><th>from</th><th>answers citing it (95% CI)</th>"
            "<th>vs the week before</th><th>brands named beside it</th></tr>")
    body = "".join(
        f"<tr><td>{escape(p)}</td><td>{escape(d)}</td><td>{escape(c)}{_own(o)}</td><td>{escape(s)}</td>"
        f"<td>{share:.0%} ({low:.0%}-{high:.0%})</td><td>{_change(change)}</td><td>{n}</td></tr>"
        for p, d, s, c, o, share, low, high, change, n in rows)
    classes = "".join(f"<li><b>{escape(p)}</b>: {', '.join(m)}</li>" for p, m in mix.items())
    note = ('<p class="note">The domains each platform\'s valid answers cite most, from its structured citations'
            " (<i>platform</i>) or from links in the answer text (<i>text</i>), with the change of that share"
            " against the 7 days before. Classes: the brands' own domains, encyclopedias, Q&amp;A and community,"
            " news, e-commerce, government, other (the domain table in config). Share of answers citing each"
            f" class:</p><ul class=\"note\">{classes}</ul>")
    return f"<h2>Where each AI gets its facts</h2>{note}<table>{head}{body}</table>"


def _own(brand: str | None) -> str:
    return f" ({escape(brand)})" if brand else ""


def _change(change: float | None) -> str:
    if change is None:
        return "new"
    arrow = "▲" if change > 0 else "▼" if change < 0 else ""
    return f'<span class="{"up" if change > 0 else "down"}">{arrow} {change * 100:+.0f} pp</span>'
