"""The collection journal of one partition: requests, every HTTP attempt, every answer.

One small DuckDB file per (date, platform) under the data directory. Only the run that
collects the partition writes it, so runs for different platforms never wait on each
other's lock, and a checkpoint is a short local transaction. Answers are keyed by
request key: a request that succeeded is never sent or stored again. At the end of a
run the journal is published to the warehouse in one transaction (warehouse/resource.py).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import asdict
from datetime import UTC, date, datetime
from pathlib import Path

import duckdb
import pyarrow as pa

from ..warehouse.db import ensure_table, transaction
from ..warehouse.tables import JOURNAL_ANSWERS, JOURNAL_ATTEMPTS, JOURNAL_REQUESTS, JOURNAL_TABLES, Table
from .client import DEFERRED, PENDING, SUCCEEDED, Attempt, RequestOutcome
from .plan import PlannedRequest, content_hash


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
        for table in JOURNAL_TABLES:
            ensure_table(self.conn, table)

    def close(self) -> None:
        self.conn.close()

    def __enter__(self) -> CollectionJournal:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def register_plan(self, planned: Sequence[PlannedRequest]) -> None:
        """Add requests not seen before; deferred ones become pending again."""
        now = datetime.now(UTC)
        batch = JOURNAL_REQUESTS.batch([
            (r.request_key, date.fromisoformat(r.date), r.platform, r.question_id, r.question_text, r.category,
             r.scene, r.round, r.priority, r.model, r.params_json, r.prompt_hash, PENDING, 0, None, None, now)
            for r in planned])
        with transaction(self.conn):
            self._insert_new(JOURNAL_REQUESTS, batch)
            self.conn.execute(
                "UPDATE requests SET state = ?, updated_at = ? WHERE state = ?", [PENDING, now, DEFERRED])

    def succeeded_keys(self) -> set[str]:
        return {k for (k,) in self.conn.execute("SELECT request_key FROM answers").fetchall()}

    def cost_so_far(self) -> float:
        """What the partition's stored answers cost (max_cost_per_day counts it)."""
        return self.conn.execute("SELECT coalesce(sum(cost), 0) FROM answers").fetchone()[0]

    def attempts_so_far(self) -> dict[str, int]:
        rows = self.conn.execute("SELECT request_key, max(attempt) FROM attempts GROUP BY 1").fetchall()
        return dict(rows)

    def checkpoint(self, attempts: Iterable[Attempt], outcomes: Iterable[RequestOutcome]) -> None:
        """Store a batch durably: attempts, answers and request states in one transaction.

        Batches go in as Arrow tables: DuckDB ingests those in bulk, executemany row by row.
        """
        attempts, outcomes = list(attempts), list(outcomes)
        if not attempts and not outcomes:
            return
        now = datetime.now(UTC)
        answers = [o for o in outcomes if o.state == SUCCEEDED and o.answer]
        with transaction(self.conn):
            if attempts:
                self._insert_new(JOURNAL_ATTEMPTS, JOURNAL_ATTEMPTS.batch([
                    (a.request_key, a.attempt, a.run_id, a.started_at, a.finished_at, a.http_status,
                     a.error_class, a.error_message, a.latency_ms, a.prompt_tokens,
                     a.completion_tokens, a.total_tokens, a.error_code, a.tool_rounds) for a in attempts]))
            if answers:
                self._insert_new(JOURNAL_ANSWERS, JOURNAL_ANSWERS.batch([answer_row(o) for o in answers]))
            if outcomes:
                self.conn.register("batch", pa.Table.from_pylist([
                    {"request_key": o.request.request_key, "state": o.state, "error_class": o.error_class,
                     "error_message": o.error_message, "attempts": len(o.attempts)} for o in outcomes]))
                self.conn.execute(
                    """UPDATE requests SET state = batch.state, last_error_class = batch.error_class,
                           last_error = batch.error_message, attempts = requests.attempts + batch.attempts,
                           updated_at = ?
                       FROM batch
                       WHERE requests.request_key = batch.request_key AND requests.state <> 'succeeded'""",
                    [now])
                self.conn.unregister("batch")

    def _insert_new(self, table: Table, batch: pa.Table) -> None:
        """Insert the rows whose key is not there yet: a request, attempt or answer is stored once."""
        self.conn.register("batch", batch)
        self.conn.execute("INSERT INTO " + table.name + " BY NAME SELECT * FROM batch ON CONFLICT DO NOTHING")
        self.conn.unregister("batch")

    def state_counts(self) -> dict[str, int]:
        return dict(self.conn.execute("SELECT state, count(*) FROM requests GROUP BY 1").fetchall())


def answer_row(outcome: RequestOutcome) -> tuple:
    """An answer in the column order of JOURNAL_ANSWERS."""
    answer, attempt = outcome.answer, outcome.answer.attempt
    normalized, usage = answer.normalized, answer.normalized.usage
    return (outcome.request.request_key, attempt.attempt, attempt.run_id, normalized.text, answer.payload_json,
            normalized.model, content_hash(normalized.text), attempt.latency_ms, usage.prompt_tokens,
            usage.completion_tokens, usage.total_tokens, attempt.finished_at, normalized.outcome,
            normalized.finish_reason, normalized.reasoning_text, [asdict(c) for c in normalized.citations],
            normalized.search_used, usage.cached_tokens, usage.reasoning_tokens, usage.search_count, answer.cost,
            answer.currency)
