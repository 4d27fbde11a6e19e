"""The collection journal of one partition: requests, every HTTP attempt, every answer.

One small DuckDB file per (date, platform) under the data directory. Only the run that
collects the partition writes it, so runs for different platforms never wait on each
other's lock, and a checkpoint is a short local transaction. Answers are keyed by
request key: a request that succeeded is never sent or stored again. At the end of a
run the journal is published to the warehouse in one transaction (warehouse.py).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from datetime import UTC, datetime
from pathlib import Path

import duckdb
import pyarrow as pa

from ..warehouse.db import transaction
from .client import DEFERRED, PENDING, SUCCEEDED, Attempt, RequestOutcome
from .plan import PlannedRequest, content_hash

SCHEMA = """
CREATE TABLE IF NOT EXISTS requests (
    request_key VARCHAR PRIMARY KEY,
    date DATE NOT NULL,
    platform VARCHAR NOT NULL,
    question_id VARCHAR NOT NULL,
    question_text VARCHAR NOT NULL,
    category VARCHAR NOT NULL,
    round INTEGER NOT NULL,
    priority INTEGER NOT NULL,
    model VARCHAR NOT NULL,
    params_json VARCHAR NOT NULL,
    prompt_hash VARCHAR NOT NULL,
    state VARCHAR NOT NULL,              -- pending | succeeded | failed | deferred
    attempts INTEGER NOT NULL DEFAULT 0,
    last_error_class VARCHAR,
    last_error VARCHAR,
    updated_at TIMESTAMPTZ NOT NULL
);
CREATE TABLE IF NOT EXISTS attempts (    -- append-only ledger: one row per HTTP attempt
    request_key VARCHAR NOT NULL,
    attempt INTEGER NOT NULL,
    run_id VARCHAR NOT NULL,
    started_at TIMESTAMPTZ NOT NULL,
    finished_at TIMESTAMPTZ NOT NULL,
    http_status INTEGER,
    error_class VARCHAR,
    error_message VARCHAR,
    latency_ms DOUBLE NOT NULL,
    prompt_tokens INTEGER,
    completion_tokens INTEGER,
    total_tokens INTEGER,
    PRIMARY KEY (request_key, attempt)
);
CREATE TABLE IF NOT EXISTS answers (
    request_key VARCHAR PRIMARY KEY,
    attempt INTEGER NOT NULL,
    run_id VARCHAR NOT NULL,
    answer_text VARCHAR NOT NULL,
    payload_json VARCHAR NOT NULL,
    response_model VARCHAR,
    content_hash VARCHAR NOT NULL,
    latency_ms DOUBLE NOT NULL,
    prompt_tokens INTEGER,
    completion_tokens INTEGER,
    total_tokens INTEGER,
    received_at TIMESTAMPTZ NOT NULL
);
"""


ATTEMPT_COLUMNS = ("request_key", "attempt", "run_id", "started_at", "finished_at", "http_status",
                   "error_class", "error_message", "latency_ms", "prompt_tokens", "completion_tokens",
                   "total_tokens")
ANSWER_COLUMNS = ("request_key", "attempt", "run_id", "answer_text", "payload_json", "response_model",
                  "content_hash", "latency_ms", "prompt_tokens", "completion_tokens", "total_tokens",
                  "received_at")

INSERT_ATTEMPTS = "INSERT INTO attempts BY NAME SELECT * FROM batch ON CONFLICT DO NOTHING"
INSERT_ANSWERS = "INSERT INTO answers BY NAME SELECT * FROM batch ON CONFLICT DO NOTHING"


def _columns(names: Sequence[str], rows: list[tuple]) -> pa.Table:
    return pa.Table.from_pydict({name: list(values) for name, values in zip(names, zip(*rows))})


class JournalBusy(Exception):
    """Another process is collecting the same partition right now."""


class CollectionJournal:
    def __init__(self, path: Path):
        self.path = path
        path.parent.mkdir(parents=True, exist_ok=True)
        try:
            self.conn = duckdb.connect(str(path))
        except duckdb.IOException as exc:
            raise JournalBusy(f"partition journal {path} is locked by another process: {exc}") from None
        self.conn.execute(SCHEMA)

    def close(self) -> None:
        self.conn.close()

    def __enter__(self) -> CollectionJournal:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def register_plan(self, planned: Sequence[PlannedRequest]) -> None:
        """Add requests not seen before; deferred ones become pending again."""
        now = datetime.now(UTC)
        batch = _columns(
            ("request_key", "date", "platform", "question_id", "question_text", "category", "round",
             "priority", "model", "params_json", "prompt_hash", "state", "updated_at"),
            [(r.request_key, r.date, r.platform, r.question_id, r.question_text, r.category, r.round,
              r.priority, r.model, r.params_json, r.prompt_hash, PENDING, now) for r in planned],
        )
        with transaction(self.conn):
            self.conn.register("batch", batch)
            self.conn.execute(
                """INSERT INTO requests BY NAME
                   SELECT * REPLACE (CAST(date AS DATE) AS date) FROM batch ON CONFLICT DO NOTHING""")
            self.conn.unregister("batch")
            self.conn.execute(
                "UPDATE requests SET state = ?, updated_at = ? WHERE state = ?", [PENDING, now, DEFERRED])

    def succeeded_keys(self) -> set[str]:
        return {k for (k,) in self.conn.execute("SELECT request_key FROM answers").fetchall()}

    def attempts_so_far(self) -> dict[str, int]:
        rows = self.conn.execute("SELECT request_key, max(attempt) FROM attempts GROUP BY 1").fetchall()
        return dict(rows)

    def checkpoint(self, attempts: Iterable[Attempt], outcomes: Iterable[RequestOutcome]) -> None:
        """Store a batch durably: attempts, answers and request states in one transaction.

        Batches go in as Arrow tables: row-by-row executemany costs ~100 ms a batch here.
        """
        attempts, outcomes = list(attempts), list(outcomes)
        if not attempts and not outcomes:
            return
        now = datetime.now(UTC)
        answers = [o for o in outcomes if o.state == SUCCEEDED and o.answer]
        with transaction(self.conn):
            if attempts:
                self._insert(INSERT_ATTEMPTS, _columns(ATTEMPT_COLUMNS, [
                    (a.request_key, a.attempt, a.run_id, a.started_at, a.finished_at, a.http_status,
                     a.error_class, a.error_message, a.latency_ms, a.prompt_tokens,
                     a.completion_tokens, a.total_tokens) for a in attempts]))
            if answers:
                self._insert(INSERT_ANSWERS, _columns(ANSWER_COLUMNS, [
                    (o.request.request_key, o.answer.attempt.attempt, o.answer.attempt.run_id,
                     o.answer.text, o.answer.payload_json, o.answer.response_model,
                     content_hash(o.answer.text), o.answer.attempt.latency_ms,
                     o.answer.attempt.prompt_tokens, o.answer.attempt.completion_tokens,
                     o.answer.attempt.total_tokens, o.answer.attempt.finished_at) for o in answers]))
            if outcomes:
                self.conn.register("batch", _columns(
                    ("request_key", "state", "error_class", "error_message", "attempts"),
                    [(o.request.request_key, o.state, o.error_class, o.error_message, len(o.attempts))
                     for o in outcomes]))
                self.conn.execute(
                    """UPDATE requests SET state = batch.state, last_error_class = batch.error_class,
                           last_error = batch.error_message, attempts = requests.attempts + batch.attempts,
                           updated_at = ?
                       FROM batch
                       WHERE requests.request_key = batch.request_key AND requests.state <> 'succeeded'""",
                    [now])
                self.conn.unregister("batch")

    def _insert(self, statement: str, batch: pa.Table) -> None:
        self.conn.register("batch", batch)
        self.conn.execute(statement)
        self.conn.unregister("batch")

    def state_counts(self) -> dict[str, int]:
        return dict(self.conn.execute("SELECT state, count(*) FROM requests GROUP BY 1").fetchall())
