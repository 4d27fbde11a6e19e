"""The accuracy ledger: per label (field) and who set it, the share of the random sample's
reviewed items the reviewer confirmed, with its 95% Wilson interval (the models' own `wilson`
macro), overall and per language and platform; and how often two reviewers of the same item
agree.

Only the random queue's reviews count, each item once (its first reviewer's verdict), skips
apart: the doubtful queue's items were chosen for being doubtful and would bias it. A field
other than `mentioned` is judged only where the machine said the brand is named (the count,
rank, recommendation and tone of a brand not named are no labels of their own), and only where
the reviewer agrees it is. Until a field has MIN_REVIEWS of them, the figure shown is the
shipped labelled set's, labelled as such.
"""

from __future__ import annotations

import duckdb
import pandas as pd

from visibility_assets.review.shipped_accuracy import SHIPPED_FIGURES
from visibility_assets.review.store import CONFIRMED, FIELDS, RANDOM, Review

MIN_REVIEWS = 30
# A sentiment share is a headline figure only where the labels behind it are right this often
# (measured: the random reviews, else the shipped held-out set or the judge's calibration).
HEADLINE_ACCURACY = 0.70
ALL = "all"

LEDGER = """
SELECT field, source, coalesce(language, 'all') AS language, coalesce(platform, 'all') AS platform,
       count(*) AS reviewed, count(*) FILTER (WHERE confirmed) AS confirmed,
       wilson(count(*) FILTER (WHERE confirmed), count(*)) AS share
FROM ledger_items
GROUP BY GROUPING SETS ((field, source), (field, source, language), (field, source, platform))
ORDER BY field, source, language, platform
"""
# Each field's share of the items two reviewers both judged on which they gave the same value.
AGREEMENT = """
SELECT field, count(*) AS items, count(*) FILTER (WHERE first_value = second_value) AS agreed,
       wilson(count(*) FILTER (WHERE first_value = second_value), count(*)) AS share
FROM agreement_pairs
GROUP BY field
ORDER BY field
"""
# What a figure counts, in its sentence: "118 of your reviewed mentions".
ITEM_WORDS = {"mentioned": "reviewed answers", "mention_count": "reviewed mentions", "list_rank": "reviewed mentions",
              "recommended": "reviewed mentions", "sentiment": "reviewed mentions"}
FIELD_TITLES = {"mentioned": "Mentioned", "mention_count": "Mention count", "list_rank": "List rank",
                "recommended": "Recommended", "sentiment": "Sentiment"}


def ledger_items(reviews: list[Review]) -> pd.DataFrame:
    """One row per (random item's first review, field it judged): field, source, language,
    platform, confirmed."""
    first: dict[tuple[str, str], Review] = {}
    for review in sorted(reviews, key=lambda r: r.reviewed_at):
        if review.queue == RANDOM and not review.skipped:
            first.setdefault((review.request_key, review.brand), review)
    rows = []
    for review in first.values():
        # Both say it is named: a mention the machine made up or missed is the mention label's error
        # alone, not also its count's, rank's, recommendation's and tone's.
        named = review.labels["mentioned"][0] and review.labels["mentioned"][3]
        for field in FIELDS:
            machine, source, verdict, _ = review.labels[field]
            if field == "mentioned" or named:
                rows.append((field, source, review.language, review.platform, verdict == CONFIRMED))
    return pd.DataFrame(rows, columns=["field", "source", "language", "platform", "confirmed"]).astype(
        {"field": "string", "source": "string", "language": "string", "platform": "string", "confirmed": "bool"})


def agreement_pairs(reviews: list[Review]) -> pd.DataFrame:
    """Per item two reviewers judged (the first two, either queue), each field's two values."""
    by_item: dict[tuple[str, str], list[Review]] = {}
    for review in sorted(reviews, key=lambda r: r.reviewed_at):
        if not review.skipped:
            by_item.setdefault((review.request_key, review.brand), []).append(review)
    rows = [(field, repr(pair[0].labels[field][3]), repr(pair[1].labels[field][3]))
            for pair in by_item.values() if len(pair) >= 2 for field in FIELDS]
    return pd.DataFrame(rows, columns=["field", "first_value", "second_value"]).astype("string")


def accuracy(conn: duckdb.DuckDBPyConnection, reviews: list[Review]) -> dict:
    """The ledger of `reviews` (one brand's, or all), computed on `conn` (which has the models'
    macros): `fields`, one entry per field and source with its basis and sentence; `rows`,
    every figure by language and platform; `agreement`; `skipped`, the random items skipped."""
    items, pairs = ledger_items(reviews), agreement_pairs(reviews)
    rows, agreement = [], []
    if len(items) or len(pairs):  # most overviews: no review yet, nothing to compute
        conn.register("ledger_items", items)
        conn.register("agreement_pairs", pairs)
        try:
            rows = [_figure(row) for row in _records(conn.execute(LEDGER))]
            agreement = [{"field": r["field"], "items": r["items"], "agreed": r["agreed"], **_share(r["share"])}
                         for r in _records(conn.execute(AGREEMENT))]
        finally:
            conn.unregister("ledger_items")
            conn.unregister("agreement_pairs")
    overall = {(r["field"], r["source"]): r for r in rows if r["language"] == ALL and r["platform"] == ALL}
    fields = []
    for field in FIELDS:
        sources = sorted({source for f, source in overall if f == field} | {SHIPPED_FIGURES[field].source})
        fields += [_headline(field, source, overall.get((field, source))) for source in sources]
    skipped = sum(1 for r in reviews if r.queue == RANDOM and r.skipped)
    return {"fields": fields, "rows": rows, "agreement": agreement, "skipped": skipped,
            "min_reviews": MIN_REVIEWS}


def sentiment_headline(entries: list[dict], sources: set[str], calibrated: dict[str, float]) -> dict:
    """Whether the sentiment shares are headline figures: every label source behind them
    (`sources`: analyzer, judge; a reviewer's label is right by definition) measured at least
    HEADLINE_ACCURACY. entries: the ledger's sentiment entries; calibrated: the judge's latest
    calibration accuracy by source, used where the reviews have not measured it."""
    held_down = []
    for source in sorted(sources - {"review"}):
        entry = next((e for e in entries if e["source"] == source), None)
        measured = entry["accuracy"] if entry and entry["basis"] != "none" else calibrated.get(source)
        if measured is None:
            held_down.append(f"{source}: its accuracy is not measured yet")
        elif measured < HEADLINE_ACCURACY:
            held_down.append(f"{source}: {measured:.0%} right, under the {HEADLINE_ACCURACY:.0%}"
                             " a headline figure needs")
    return {"headline": not held_down, "reason": "; ".join(held_down) or None}


def _headline(field: str, source: str, measured: dict | None) -> dict:
    reviewed = measured["reviewed"] if measured else 0
    shipped = SHIPPED_FIGURES[field]
    entry = {"field": field, "title": FIELD_TITLES[field], "source": source, "reviewed": reviewed,
             "confirmed": measured["confirmed"] if measured else 0}
    # `sentence` says it all (the accuracy page, the API); `short` fits beside a figure.
    if reviewed >= MIN_REVIEWS:
        sentence = (f"{source}: {measured['accuracy']:.0%} right ({measured['low']:.0%}–{measured['high']:.0%})"
                    f" on {reviewed} of your {ITEM_WORDS[field]}")
        return {**entry, "basis": "reviews", "accuracy": measured["accuracy"], "low": measured["low"],
                "high": measured["high"], "sentence": sentence, "short": sentence}
    waiting = f"{reviewed} of the {MIN_REVIEWS} random reviews it needs so far"
    if shipped.source == source:
        return {**entry, "basis": "shipped", "accuracy": shipped.accuracy, "low": None, "high": None,
                "sentence": f"{shipped.sentence()}; {waiting}",
                "short": f"{source}: {shipped.accuracy:.1%} right on the shipped labelled set, not yet on yours"
                         f" ({reviewed}/{MIN_REVIEWS} reviews)"}
    return {**entry, "basis": "none", "accuracy": None, "low": None, "high": None,
            "sentence": f"{source}: not measured on your answers yet ({waiting})",
            "short": f"{source}: not measured yet ({reviewed}/{MIN_REVIEWS} reviews)"}


def _figure(row: dict) -> dict:
    share = row.pop("share")
    return {**row, **_share(share)}


def _share(share: dict | None) -> dict:
    share = share or {}
    return {"accuracy": share.get("rate"), "low": share.get("low"), "high": share.get("high")}


def _records(cursor: duckdb.DuckDBPyConnection) -> list[dict]:
    columns = [c[0] for c in cursor.description]
    return [dict(zip(columns, row)) for row in cursor.fetchall()]
