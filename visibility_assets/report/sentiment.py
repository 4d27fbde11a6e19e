"""Beside the report's sentiment figures: which method labelled the day's mentions, and what
that method's labels are worth (the analyzer's held-out accuracy, the judge's agreement with it)."""

from __future__ import annotations

from datetime import date as Date

import duckdb

from visibility_assets.core.visible_text import html_text as escape
from visibility_assets.review.shipped_accuracy import SENTIMENT_HELD_OUT
from visibility_assets.warehouse.db import has_tables

SOURCES = """
SELECT coalesce(sum(judge_labelled_answers), 0), coalesce(sum(known_mentioned_answers), 0)
FROM mention_metrics WHERE date = $day
"""
JUDGES = """
SELECT platform, judge_model, judge_prompt_version, labelled_by_both, agreement, kappa
FROM sentiment_agreement WHERE week = CAST(date_trunc('week', CAST($day AS DATE)) AS DATE)
ORDER BY platform, judge_model
"""


def sentiment_method_note(conn: duckdb.DuckDBPyConnection, day: Date) -> str:
    """The method and its measured accuracy, as the section's first note."""
    judged, mentioned = conn.execute(SOURCES, {"day": day}).fetchone()
    measured = SENTIMENT_HELD_OUT.sentence()
    measured = measured[0].upper() + measured[1:] + "."
    if not judged:
        return ('<p class="note sentiment-method"><b>Method: the analyzer</b> (a learned model; the lexicon\'s'
                f" cue words explain each label) labelled all {mentioned} mentions. {escape(measured)} Read a share"
                " as a tendency, not as a fact about each answer.</p>")
    rows = conn.execute(JUDGES, {"day": day}).fetchall() if has_tables(conn, "sentiment_agreement") else []
    models = sorted({f"{model} (prompt {version})" for _, model, version, *_ in rows}) or ["judge.yaml's model"]
    head = "<tr><th>platform</th><th>judge</th><th>labelled by both</th><th>agreement</th><th>Cohen's κ</th></tr>"
    body = "".join(f"<tr><td>{escape(p)}</td><td>{escape(m)} ({escape(v)})</td><td>{n}</td><td>{a:.0%}</td>"
                   f"<td>{'–' if k is None else f'{k:.2f}'}</td></tr>" for p, m, v, n, a, k in rows)
    agreement = (f"<table>{head}{body}</table>" if rows else "")
    share = (f"all {mentioned} mentions" if judged == mentioned
             else f"{judged} of {mentioned} mentions; the analyzer the rest")
    return (f'<p class="note sentiment-method"><b>Method: the judge model</b> {escape(", ".join(models))} labelled'
            f" {share}. The judge's agreement with the analyzer this"
            " week, on the mentions both labelled (κ: 1 full agreement, 0 no more than chance), is below."
            f" {escape(measured)}</p>{agreement}")
