"""Review: one (answer, brand) at a time, dealt from the random or the doubtful queue
(review/queue.py), shown as the answers view shows it, with the machine's labels and who set
them; the reviewer confirms or corrects each (serve/reviewing.py stores it). Analysts and admins.

Accuracy: the ledger of the brand's reviews (review/ledger.py), for every role."""

from __future__ import annotations

import duckdb

from visibility_assets.judge.calibration_run import latest_calibrations
from visibility_assets.review.ledger import accuracy
from visibility_assets.review.queue import machine_labels, next_item
from visibility_assets.review.store import FIELDS, QUEUES, ReviewStore
from visibility_assets.serve.filters import FilterError, Filters
from visibility_assets.serve.views.answers import answer_items
from visibility_assets.serve.views.grid import Grid

LABEL_COLUMNS = ("field", "machine_value", "source")


def review(conn: duckdb.DuckDBPyConnection, filters: Filters, store: ReviewStore, reviewer: str,
           queue: str) -> dict:
    """The queue's next item for the reviewer, dealt (recorded as dealt before it is shown)."""
    if queue not in QUEUES:
        raise FilterError(f"queue: one of {', '.join(QUEUES)}")
    done = store.reviewed_keys(reviewer, filters.brand, queue)
    dealt = next_item(conn, queue, filters.brand, filters.start, filters.end, list(filters.platforms), done)
    data = {"queue": queue, "queues": QUEUES, "item": None, "labels": None, "dealt": dealt, "reviewed": len(done)}
    if dealt is None:
        return {**data, "tables": {"labels": Grid(LABEL_COLUMNS, ())},
                "api": {"queue": queue, "item": None, "waiting": 0}}
    _, items = answer_items(conn, [(dealt.request_key, dealt.date, dealt.platform)], filters.brand, filters.start)
    item = items[0]
    machine = machine_labels(conn, dealt.request_key, filters.brand, dealt.date, dealt.platform)
    store.deal(reviewer, dealt.request_key, filters.brand, queue)
    labels = Grid(LABEL_COLUMNS, tuple({"field": f, "machine_value": machine.values[f], "source": machine.sources[f]}
                                       for f in FIELDS))
    return {**data, "item": item, "labels": machine, "tables": {"labels": labels},
            "api": {"queue": queue, "waiting": dealt.waiting,
                    "item": {"request_key": dealt.request_key, "date": dealt.date, "platform": dealt.platform,
                             "doubtful_because": list(dealt.reasons),
                             "language": machine.language, "analyzer_version": machine.analyzer_version,
                             "judge_model": machine.judge_model, "answer_text": item["answer_text"],
                             "question_text": item["question_text"]}}}


CALIBRATION_COLUMNS = ("judge", "calibrated_on", "scope", "scope_value", "pairs", "correct", "accuracy", "low", "high",
                       "macro_f1", "kappa")


def accuracy_view(conn: duckdb.DuckDBPyConnection, filters: Filters, store: ReviewStore) -> dict:
    ledger = accuracy(conn, store.reviews(filters.brand))
    tables = {"fields": _grid(ledger["fields"], ("field", "source", "basis", "reviewed", "confirmed", "accuracy",
                                                  "low", "high", "sentence")),
              "rows": _grid(ledger["rows"], ("field", "source", "language", "platform", "reviewed", "confirmed",
                                             "accuracy", "low", "high")),
              "agreement": _grid(ledger["agreement"], ("field", "items", "agreed", "accuracy", "low", "high")),
              "judge_calibration": _grid(latest_calibrations(conn), CALIBRATION_COLUMNS)}
    return {"ledger": ledger, "tables": tables,
            "api": {"brand": filters.brand, "skipped": ledger["skipped"], "min_reviews": ledger["min_reviews"]}}


def _grid(rows: list[dict], columns: tuple[str, ...]) -> Grid:
    return Grid(columns, tuple({c: row.get(c) for c in columns} for row in rows))
