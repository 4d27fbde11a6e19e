"""Analysts' reviews of the machine's labels, one (answer, brand) at a time, in one SQLite file
under the data directory (`workspace/reviews.sqlite`), beside the accounts: the workspace writes
them, the pipeline reads them (the warehouse stays read-only for the workspace).

An item is dealt from a queue before it is reviewed, and the deal is kept: a review counts as
one of the random sample only when the random queue dealt that item to that reviewer, so no one
can pick what the accuracy estimate is computed from. Every review keeps the labels the reviewer
judged as the machine had set them (value, who set it, the analyzer version and the judge), the
reviewer's verdict and value for each, the reviewer and the time. A second reviewer of the same
item adds a review of their own; a reviewer who reviews an item again replaces their own.
"""

from __future__ import annotations

import json
import sqlite3
import time
import uuid
from contextlib import AbstractContextManager
from dataclasses import dataclass
from datetime import UTC, date, datetime
from pathlib import Path

from visibility_assets.core.sqlite_file import SqliteFile

RANDOM, DOUBTFUL = "random", "doubtful"
QUEUES = (RANDOM, DOUBTFUL)  # the random sample (the estimate) and the doubtful first (corrections only)
CONFIRMED, CORRECTED = "confirmed", "corrected"
# The labels a reviewer judges, in the order the page shows them.
FIELDS = ("mentioned", "mention_count", "list_rank", "recommended", "sentiment")
SENTIMENTS = ("positive", "neutral", "negative")
MAX_NOTE_CHARS = 2000
MAX_COUNT = 999

SCHEMA = """
CREATE TABLE IF NOT EXISTS deals (
    reviewer TEXT NOT NULL, request_key TEXT NOT NULL, brand TEXT NOT NULL, queue TEXT NOT NULL,
    dealt_at REAL NOT NULL, PRIMARY KEY (reviewer, request_key, brand, queue));
CREATE TABLE IF NOT EXISTS reviews (
    review_id TEXT PRIMARY KEY, request_key TEXT NOT NULL, brand TEXT NOT NULL, date TEXT NOT NULL,
    platform TEXT NOT NULL, category TEXT NOT NULL, queue TEXT NOT NULL, reviewer TEXT NOT NULL,
    reviewed_at REAL NOT NULL, language TEXT NOT NULL, analyzer_version TEXT, judge_model TEXT,
    skipped INTEGER NOT NULL, note TEXT, UNIQUE (reviewer, request_key, brand));
CREATE INDEX IF NOT EXISTS reviews_by_brand ON reviews (brand, queue);
CREATE INDEX IF NOT EXISTS reviews_by_partition ON reviews (date, platform);
CREATE TABLE IF NOT EXISTS review_labels (
    review_id TEXT NOT NULL REFERENCES reviews(review_id) ON DELETE CASCADE, field TEXT NOT NULL,
    machine TEXT, source TEXT NOT NULL, verdict TEXT NOT NULL, value TEXT, PRIMARY KEY (review_id, field));
"""
# The non-skipped reviews of some partitions, given as a JSON array of [date, platform] pairs.
PARTITION_REVIEWS = """
SELECT r.review_id, r.request_key, r.brand, r.date, r.platform, r.reviewer, r.queue, r.reviewed_at, l.field, l.value
FROM json_each(?) AS wanted
JOIN reviews AS r ON r.date = json_extract(wanted.value, '$[0]') AND r.platform = json_extract(wanted.value, '$[1]')
JOIN review_labels AS l USING (review_id)
WHERE NOT r.skipped
ORDER BY r.reviewed_at, r.review_id
"""


class ReviewError(ValueError):
    """A review that cannot be stored; the message says which part and why."""


@dataclass(frozen=True)
class MachineLabels:
    """An item as the machine labelled it: the answer, the brand and the five labels with who set them."""

    request_key: str
    brand: str
    date: str
    platform: str
    category: str
    language: str
    analyzer_version: str | None
    judge_model: str | None
    values: dict  # field -> value (JSON scalar or None)
    sources: dict  # field -> analyzer | judge (the review's own is 'review')


@dataclass(frozen=True)
class Review:
    review_id: str
    request_key: str
    brand: str
    date: str
    platform: str
    queue: str
    reviewer: str
    reviewed_at: float
    language: str
    skipped: bool
    note: str | None
    labels: dict  # field -> (machine, source, verdict, value)


def corrected_values(form: dict, machine: MachineLabels) -> dict:
    """The reviewer's value of each field from a submitted form (strings), checked."""
    values = {}
    for field in FIELDS:
        raw = str(form.get(field, "")).strip()
        values[field] = _parse(field, raw)
    if not values["mentioned"]:  # a brand not named has no count, rank, recommendation or tone
        values.update(mention_count=0, list_rank=None, recommended=None, sentiment=None)
    elif values["mention_count"] == 0:
        raise ReviewError("mention_count: a brand the answer names is named at least once")
    return values


def _parse(field: str, raw: str):
    if field in ("mentioned", "recommended"):
        if raw not in ("true", "false", ""):
            raise ReviewError(f"{field}: true or false")
        return None if raw == "" else raw == "true"
    if field == "sentiment":
        if raw not in (*SENTIMENTS, ""):
            raise ReviewError(f"sentiment: one of {', '.join(SENTIMENTS)}, or empty for none")
        return raw or None
    if raw == "":
        return None if field == "list_rank" else 0
    if not raw.isdigit() or not (1 if field == "list_rank" else 0) <= int(raw) <= MAX_COUNT:
        raise ReviewError(f"{field}: a whole number from {1 if field == 'list_rank' else 0} to {MAX_COUNT}"
                          + (", or empty when the brand is in no list" if field == "list_rank" else ""))
    return int(raw)


class ReviewStore:
    def __init__(self, path: Path):
        self.path = path
        self._file = SqliteFile(path, SCHEMA)

    @classmethod
    def under(cls, home: Path) -> ReviewStore:
        return cls(home / "workspace" / "reviews.sqlite")

    def _db(self) -> AbstractContextManager[sqlite3.Connection]:
        return self._file.connect()

    def deal(self, reviewer: str, request_key: str, brand: str, queue: str) -> None:
        """Record that `queue` dealt the item to the reviewer (before it is shown)."""
        with self._db() as conn:
            conn.execute("INSERT OR IGNORE INTO deals VALUES (?, ?, ?, ?, ?)",
                         (reviewer, request_key, brand, queue, time.time()))

    def was_dealt(self, reviewer: str, request_key: str, brand: str, queue: str) -> bool:
        with self._db() as conn:
            return conn.execute("SELECT 1 FROM deals WHERE reviewer = ? AND request_key = ? AND brand = ?"
                                " AND queue = ?", (reviewer, request_key, brand, queue)).fetchone() is not None

    def reviewed_keys(self, reviewer: str, brand: str, queue: str) -> list[str]:
        """The answers `queue` should no longer deal the reviewer for the brand: those reviewed or
        skipped there, and for the doubtful queue those reviewed in either. The random queue deals
        again an item its reviewer judged as doubtful: leaving it out would leave the doubtful
        items out of the random sample (the new review then replaces the reviewer's first)."""
        with self._db() as conn:
            return [key for (key,) in conn.execute(
                "SELECT request_key FROM reviews WHERE reviewer = ? AND brand = ? AND (queue = ? OR ? = ?)",
                (reviewer, brand, queue, queue, DOUBTFUL))]

    def record(self, reviewer: str, queue: str, machine: MachineLabels, values: dict | None,
               note: str | None = None) -> Review:
        """Store a review of the item as the machine labelled it; `values` None: skipped. The
        queue must have dealt the item to the reviewer (see the module's doc)."""
        if queue not in QUEUES:
            raise ReviewError(f"queue: one of {', '.join(QUEUES)}")
        note = (note or "").strip() or None
        if note is not None and len(note) > MAX_NOTE_CHARS:
            raise ReviewError(f"note: at most {MAX_NOTE_CHARS} characters")
        if not self.was_dealt(reviewer, machine.request_key, machine.brand, queue):
            raise ReviewError(f"the {queue} queue did not deal this answer and brand to {reviewer}:"
                              " review the items the queue deals")
        review_id = uuid.uuid4().hex
        labels = {} if values is None else {
            field: (machine.values[field], machine.sources[field],
                    CONFIRMED if values[field] == machine.values[field] else CORRECTED, values[field])
            for field in FIELDS}
        now = time.time()
        with self._db() as conn:
            conn.execute("BEGIN IMMEDIATE")
            conn.execute("DELETE FROM reviews WHERE reviewer = ? AND request_key = ? AND brand = ?",
                         (reviewer, machine.request_key, machine.brand))
            conn.execute("INSERT INTO reviews VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                         (review_id, machine.request_key, machine.brand, machine.date, machine.platform,
                          machine.category, queue, reviewer, now, machine.language, machine.analyzer_version,
                          machine.judge_model, int(values is None), note))
            conn.executemany("INSERT INTO review_labels VALUES (?, ?, ?, ?, ?, ?)",
                             [(review_id, field, json.dumps(m), source, verdict, json.dumps(v))
                              for field, (m, source, verdict, v) in labels.items()])
            conn.execute("COMMIT")
        return Review(review_id, machine.request_key, machine.brand, machine.date, machine.platform, queue,
                      reviewer, now, machine.language, values is None, note, labels)

    def effective(self, partitions) -> list[dict]:
        """Per answer and brand reviewed in the partitions ((date, platform) pairs), the latest
        review that judged it (skips apart), as label_reviews' rows: its values replace the
        machine's in the metrics."""
        if not self.path.exists():
            return []
        wanted = json.dumps(sorted({(str(day), platform) for day, platform in partitions}))
        latest: dict[tuple[str, str], dict] = {}
        with self._db() as conn:  # only the partitions' reviews: a night never reads a year of them
            rows = conn.execute(PARTITION_REVIEWS, (wanted,)).fetchall()
        reviewers: dict[tuple[str, str], set[str]] = {}
        for review_id, key, brand, day, platform, reviewer, queue, at, field, value in rows:
            item = (key, brand)
            reviewers.setdefault(item, set()).add(reviewer)
            row = latest.get(item)
            if row is None or row["review_id"] != review_id:
                row = latest[item] = {"request_key": key, "date": date.fromisoformat(day), "platform": platform,
                                      "brand": brand, "review_id": review_id, "reviewer": reviewer, "queue": queue,
                                      "reviewed_at": datetime.fromtimestamp(at, UTC)}
            row[field] = json.loads(value)
        return [{**row, "reviewers": len(reviewers[item])} for item, row in latest.items()]

    def changed_since(self, since: float) -> tuple[float, list[tuple[str, str]]]:
        """The newest review's time, and the (date, platform) partitions reviewed after `since`."""
        if not self.path.exists():
            return since, []
        with self._db() as conn:
            newest = conn.execute("SELECT max(reviewed_at) FROM reviews").fetchone()[0] or since
            found = conn.execute("SELECT DISTINCT date, platform FROM reviews WHERE reviewed_at > ? AND NOT skipped"
                                 " ORDER BY date, platform", (since,)).fetchall()
        return max(newest, since), [(day, platform) for day, platform in found]

    def reviews(self, brand: str | None = None) -> list[Review]:
        """Every review (of the brand), oldest first."""
        with self._db() as conn:
            rows = conn.execute("SELECT review_id, request_key, brand, date, platform, queue, reviewer, reviewed_at,"
                                " language, skipped, note FROM reviews WHERE ? IS NULL OR brand = ?"
                                " ORDER BY reviewed_at, review_id", (brand, brand)).fetchall()
            labels: dict[str, dict] = {}
            for review_id, field, machine, source, verdict, value in conn.execute(
                    "SELECT l.review_id, field, machine, source, verdict, value FROM review_labels AS l"
                    " JOIN reviews AS r USING (review_id) WHERE ? IS NULL OR r.brand = ?", (brand, brand)):
                labels.setdefault(review_id, {})[field] = (json.loads(machine), source, verdict, json.loads(value))
        return [Review(*row[:9], bool(row[9]), row[10], labels.get(row[0], {})) for row in rows]
