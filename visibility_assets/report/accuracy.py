"""The report's accuracy ledger (review/ledger.py): per label and who set it, how often the
analysts' random reviews found it right, or the shipped labelled set's figure, labelled as such,
until a label has enough reviews; all brands pooled."""

from __future__ import annotations

import duckdb

from visibility_assets.core.visible_text import html_text as escape
from visibility_assets.review.ledger import accuracy
from visibility_assets.review.store import Review

BASIS = {"reviews": "your random reviews", "shipped": "shipped labelled set", "none": "not measured yet"}


def accuracy_section(conn: duckdb.DuckDBPyConnection, reviews: list[Review]) -> str:
    """The section's HTML; the connection needs the models' macros."""
    ledger = accuracy(conn, reviews)
    rows = "".join(
        f"<tr><td>{escape(f['title'])}</td><td>{escape(f['source'])}</td>"
        f"<td>{'–' if f['accuracy'] is None else format(f['accuracy'], '.1%')}</td>"
        f"<td>{'–' if f['low'] is None else format(f['low'], '.0%') + '–' + format(f['high'], '.0%')}</td>"
        f"<td>{f['reviewed']}</td><td>{BASIS[f['basis']]}</td><td>{escape(f['sentence'])}</td></tr>"
        for f in ledger["fields"])
    return ("<h2>How right the labels are</h2>"
            '<p class="note">From the analysts\' reviews of a random sample of the labels (the workspace\'s Review'
            f" view; each answer once, {ledger['skipped']} skipped), with 95% Wilson intervals; until a label has"
            f" {ledger['min_reviews']} random reviews, the shipped labelled set's figure, which is not measured on"
            " these answers.</p><table><tr><th>label</th><th>set by</th><th>right</th><th>interval</th>"
            f"<th>reviewed</th><th>basis</th><th>in words</th></tr>{rows}</table>")
