"""The collection journal of one partition: requests, every HTTP attempt, every answer.

One small DuckDB file per (date, platform) under the data directory. Only the run that
collects the partition writes it, so runs for different platforms never wait on each
other's lock, and a checkpoint is a short local transaction. Answers are keyed by
request key: a request that succeeded is never sent or stored again. At the end of a
run the journal is published to the warehouse in one transaction (warehouse.py).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path

import duckdb

from ..paths import journal_dir
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


def journal_path(date: str, platform: str) -> Path:
    return journal_dir() / date / f"{platform}.duckdb"


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
        rows = [(r.request_key, r.date, r.platform, r.question_id, r.question_text, r.category,
                 r.round, r.priority, r.model, r.params_json, r.prompt_hash, PENDING, now)
                for r in planned]
        with self._transaction():
            self.conn.executemany(
                """INSERT INTO requests (request_key, date, platform, question_id, question_text,
                       category, round, priority, model, params_json, prompt_hash, state, updated_at)
                   VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING""",
                rows,
            )
            self.conn.execute(
                "UPDATE requests SET state = ?, updated_at = ? WHERE state = ?", [PENDING, now, DEFERRED]
            )

    def succeeded_keys(self) -> set[str]:
        return {k for (k,) in self.conn.execute("SELECT request_key FROM answers").fetchall()}

    def attempts_so_far(self) -> dict[str, int]:
        rows = self.conn.execute("SELECT request_key, max(attempt) FROM attempts GROUP BY 1").fetchall()
        return dict(rows)

    def checkpoint(self, attempts: Iterable[Attempt], outcomes: Iterable[RequestOutcome]) -> None:
        """Store a batch durably: attempts, answers and request states in one transaction."""
        attempts, outcomes = list(attempts), list(outcomes)
        if not attempts and not outcomes:
            return
        now = datetime.now(UTC)
        with self._transaction():
            if attempts:
                self.conn.executemany(
                    "INSERT INTO attempts VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING",
                    [(a.request_key, a.attempt, a.run_id, a.started_at, a.finished_at, a.http_status,
                      a.error_class, a.error_message, a.latency_ms, a.prompt_tokens,
                      a.completion_tokens, a.total_tokens) for a in attempts],
                )
            answers = [o for o in outcomes if o.state == SUCCEEDED and o.answer]
            if answers:
                self.conn.executemany(
                    "INSERT INTO answers VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING",
                    [(o.request.request_key, o.answer.attempt.attempt, o.answer.attempt.run_id,
                      o.answer.text, o.answer.payload_json, o.answer.response_model,
                      content_hash(o.answer.text), o.answer.attempt.latency_ms,
                      o.answer.attempt.prompt_tokens, o.answer.attempt.completion_tokens,
                      o.answer.attempt.total_tokens, o.answer.attempt.finished_at) for o in answers],
                )
            if outcomes:
                self.conn.executemany(
                    """UPDATE requests SET state = ?, last_error_class = ?, last_error = ?,
                           attempts = attempts + ?, updated_at = ?
                       WHERE request_key = ? AND state <> 'succeeded'""",
                    [(o.state, o.error_class, o.error_message, len(o.attempts), now,
                      o.request.request_key) for o in outcomes],
                )

    def state_counts(self) -> dict[str, int]:
        return dict(self.conn.execute("SELECT state, count(*) FROM requests GROUP BY 1").fetchall())

    @contextmanager
    def _transaction(self):
        self.conn.execute("BEGIN TRANSACTION")
        try:
            yield
        except BaseException:
            self.conn.execute("ROLLBACK")
            raise
        self.conn.execute("COMMIT")
