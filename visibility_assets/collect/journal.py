"""The collection journal of a partition: requests, every HTTP attempt, every answer.

Three lake tables (journal_requests, journal_attempts, journal_answers) keyed by partition, so
a collection killed on one machine resumes on another. Only the process holding the
partition's lock (partition_lock.py) writes it; a checkpoint is one small lake transaction:
a small Parquet file that the weekly maintenance merges (warehouse/maintenance.py). Answers are keyed by
request key: a request that succeeded is never sent or stored again. At the end of a run the
partition is published to the warehouse tables in one transaction (warehouse/resource.py).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from contextlib import ExitStack
from dataclasses import asdict
from datetime import UTC, date, datetime
from pathlib import Path
from typing import TypeVar

import duckdb
import pyarrow as pa

from visibility_assets.collect.client import DEFERRED, PENDING, SUCCEEDED, Attempt, RequestOutcome
from visibility_assets.collect.in_flight import InFlightLog
from visibility_assets.collect.partition_lock import PartitionBusy, partition_lock
from visibility_assets.collect.plan import PlannedRequest, content_hash
from visibility_assets.core.paths import data_dir
from visibility_assets.warehouse.db import ensure_table, insert_batch
from visibility_assets.warehouse.lake import LakeSettings, write_with_retry
from visibility_assets.warehouse.tables import JOURNAL_ANSWERS, JOURNAL_ATTEMPTS, JOURNAL_REQUESTS, JOURNAL_TABLES

__all__ = ["CollectionJournal", "PartitionBusy"]

T = TypeVar("T")
PARTITION = "date = $date AND platform = $platform"
# Each request's attempts, counted from those journaled (a run that died counted none).
JOURNALED_ATTEMPTS = """(SELECT count(*) FROM journal_attempts AS a
                WHERE a.date = $date AND a.platform = $platform AND a.request_key = r.request_key)"""
# The outcomes' states (the registered `batch`).
SET_STATES = """
UPDATE journal_requests AS r
SET state = batch.state, last_error_class = batch.error_class, last_error = batch.error_message,
    attempts = """ + JOURNALED_ATTEMPTS + """, updated_at = $now
FROM batch
WHERE r.date = $date AND r.platform = $platform AND r.request_key = batch.request_key AND r.state <> 'succeeded'
"""
# Requests with a stored answer whose state a dead run never set.
ANSWERED_SUCCEEDED = """
UPDATE journal_requests AS r
SET state = $succeeded, attempts = """ + JOURNALED_ATTEMPTS + """, updated_at = $now
WHERE r.date = $date AND r.platform = $platform AND r.state <> $succeeded
  AND r.request_key IN (SELECT request_key FROM journal_answers WHERE date = $date AND platform = $platform)
"""


class CollectionJournal:
    def __init__(self, settings: LakeSettings, date_: str, platform: str):
        self.settings, self.date, self.platform = settings, date_, platform
        self._exit = ExitStack()
        self._exit.enter_context(partition_lock(settings, date_, platform))  # raises PartitionBusy
        try:
            # What is stored already, in one transaction: the journal inserts only what is new
            # (DuckLake has no keys).
            self._requests, self._answers, self._attempts = self._write(self._stored)
        except BaseException:
            self.close()
            raise

    def close(self) -> None:
        self._exit.close()

    def __enter__(self) -> CollectionJournal:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    @property
    def _params(self) -> dict:
        return {"date": self.date, "platform": self.platform}

    def _stored(self, conn: duckdb.DuckDBPyConnection) -> tuple[set, set, set]:
        for table in JOURNAL_TABLES:
            ensure_table(conn, table)

        def keys(select: str) -> list[tuple]:
            return conn.execute(select + " WHERE " + PARTITION, self._params).fetchall()

        return ({key for (key,) in keys("SELECT request_key FROM journal_requests")},
                {key for (key,) in keys("SELECT request_key FROM journal_answers")},
                {tuple(row) for row in keys("SELECT request_key, attempt FROM journal_attempts")})

    def query(self, sql: str, params: dict | None = None) -> list[tuple]:
        """The rows of a query that names this partition as $date and $platform."""
        return self._write(lambda conn: conn.execute(sql, {**self._params, **(params or {})}).fetchall())

    def _write(self, work: Callable[[duckdb.DuckDBPyConnection], T]) -> T:
        """One transaction, started over on a commit conflict or a busy catalog."""
        return write_with_retry(self.settings, work, snapshot=False)[0]

    def register_plan(self, planned: Sequence[PlannedRequest]) -> None:
        """Add requests not seen before; deferred ones become pending again."""
        now = datetime.now(UTC)
        new = [r for r in planned if r.request_key not in self._requests]
        batch = JOURNAL_REQUESTS.batch([
            (r.request_key, date.fromisoformat(r.date), r.platform, r.question_id, r.question_text, r.category,
             r.scene, r.round, r.priority, r.model, r.params_json, r.prompt_hash, PENDING, 0, None, None, now,
             r.task_id, r.variant)
            for r in new])

        resumed = bool(self._requests)  # a new partition has nothing deferred, nor states to mend

        def work(conn: duckdb.DuckDBPyConnection) -> None:
            insert_batch(conn, JOURNAL_REQUESTS, batch)
            if resumed:
                conn.execute("UPDATE journal_requests SET state = $pending, updated_at = $now"
                             " WHERE " + PARTITION + " AND state = $deferred",
                             {**self._params, "pending": PENDING, "deferred": DEFERRED, "now": now})
            if self._answers:
                # A run that died before its last checkpoint left its answered requests' states unset.
                conn.execute(ANSWERED_SUCCEEDED, {**self._params, "succeeded": SUCCEEDED, "now": now})

        self._write(work)
        self._requests.update(r.request_key for r in new)

    def succeeded_keys(self) -> set[str]:
        return set(self._answers)

    def cost_so_far(self, extra_only: bool = False) -> float:
        """What the partition's stored answers cost (max_cost_per_day counts it); with
        `extra_only`, those of event-driven tasks (extra_cost_per_day counts them)."""
        if not self._answers:
            return 0.0  # a new night's partition: no query, no turn among the writers
        return self.query(
            "SELECT coalesce(sum(a.cost), 0) FROM journal_answers AS a JOIN journal_requests AS r"
            " USING (request_key, date, platform)"
            " WHERE a.date = $date AND a.platform = $platform AND (r.task_id IS NOT NULL OR NOT $extra_only)",
            {"extra_only": extra_only})[0][0]

    def attempts_so_far(self) -> dict[str, int]:
        latest: dict[str, int] = {}
        for key, attempt in self._attempts:
            latest[key] = max(attempt, latest.get(key, 0))
        return latest

    def checkpoint(self, attempts: Iterable[Attempt], outcomes: Iterable[RequestOutcome],
                   states: bool = True) -> None:
        """Store a batch durably: attempts and answers, and (with `states`) the outcomes' request
        states, in one transaction.

        The collector's periodic checkpoints leave the states out and set them all in its last
        one: a request's state is an UPDATE, which DuckLake writes as a delete and an insert, and
        it was two thirds of a checkpoint's time. What a resume needs is safe without them: a
        stored answer is what makes a request done (succeeded_keys, and register_plan marks a
        request with an answer succeeded), and each request's attempts are counted from
        journal_attempts.

        Batches go in as Arrow tables: DuckDB ingests those in bulk, executemany row by row.
        """
        attempts = [a for a in attempts if (a.request_key, a.attempt) not in self._attempts]
        outcomes = list(outcomes)
        if not attempts and not outcomes:
            return
        now = datetime.now(UTC)
        day = date.fromisoformat(self.date)
        answers = [o for o in outcomes
                   if o.state == SUCCEEDED and o.answer and o.request.request_key not in self._answers]
        attempt_rows = JOURNAL_ATTEMPTS.batch([attempt_row(a, day, self.platform) for a in attempts])
        answer_rows = JOURNAL_ANSWERS.batch([answer_row(o) + (day, self.platform) for o in answers])
        state_rows = pa.Table.from_pylist([
            {"request_key": o.request.request_key, "state": o.state, "error_class": o.error_class,
             "error_message": o.error_message} for o in outcomes])

        def work(conn: duckdb.DuckDBPyConnection) -> None:
            insert_batch(conn, JOURNAL_ATTEMPTS, attempt_rows)
            insert_batch(conn, JOURNAL_ANSWERS, answer_rows)
            if states and outcomes:
                conn.register("batch", state_rows)
                conn.execute(SET_STATES, {**self._params, "now": now})
                conn.unregister("batch")

        self._write(work)
        self._attempts.update((a.request_key, a.attempt) for a in attempts)
        self._answers.update(o.request.request_key for o in answers)

    def log_answer(self, log: InFlightLog, outcome: RequestOutcome) -> None:
        """Write an answer that just arrived to the local log, until a checkpoint stores it."""
        day = date.fromisoformat(self.date)
        log.answered(JOURNAL_ATTEMPTS.to_json(attempt_row(outcome.answer.attempt, day, self.platform)),
                     JOURNAL_ANSWERS.to_json(answer_row(outcome) + (day, self.platform)))

    def recover_answers(self, log: InFlightLog) -> int:
        """Store the answers a run that died had logged but not checkpointed, with their attempts:
        they were received (and paid for), so they are not asked for again. Returns how many."""
        answers, attempts = {}, {}
        for entry in log.answers():
            answer, attempt = JOURNAL_ANSWERS.from_json(entry["answer"]), JOURNAL_ATTEMPTS.from_json(entry["attempt"])
            if answer[0] not in self._answers:
                answers.setdefault(answer[0], answer)
            if (attempt[0], attempt[1]) not in self._attempts:
                attempts.setdefault((attempt[0], attempt[1]), attempt)
        if not answers and not attempts:
            return 0
        answer_rows, attempt_rows = JOURNAL_ANSWERS.batch(list(answers.values())), JOURNAL_ATTEMPTS.batch(
            list(attempts.values()))

        def work(conn: duckdb.DuckDBPyConnection) -> None:
            insert_batch(conn, JOURNAL_ATTEMPTS, attempt_rows)
            insert_batch(conn, JOURNAL_ANSWERS, answer_rows)

        self._write(work)
        self._attempts.update(attempts)
        self._answers.update(answers)
        return len(answers)

    def close_interrupted(self, log: InFlightLog) -> int:
        """Store the attempts a crashed run sent but never journaled, as interrupted."""
        lost = log.interrupted(self._attempts)
        if lost:
            self.checkpoint(lost, [])
        log.clear()
        return len(lost)

    def in_flight_log(self) -> InFlightLog:
        """This partition's log of attempts in flight, on this machine (in_flight.py)."""
        if self.settings.catalog_kind == "sqlite":
            root = Path(self.settings.catalog.partition(":")[2]).parent
        else:  # a shared catalog: the machine's own data directory
            root = data_dir()
        return InFlightLog(root / "in_flight" / self.date / f"{self.platform}.log")

    def state_counts(self) -> dict[str, int]:
        return dict(self.query("SELECT state, count(*) FROM journal_requests WHERE " + PARTITION + " GROUP BY 1"))


def attempt_row(a: Attempt, day: date, platform: str) -> tuple:
    """An attempt in the column order of JOURNAL_ATTEMPTS."""
    return (a.request_key, a.attempt, a.run_id, day, platform, a.started_at, a.finished_at, a.http_status,
            a.error_class, a.error_message, a.latency_ms, a.prompt_tokens, a.completion_tokens, a.total_tokens,
            a.error_code, a.tool_rounds)


def answer_row(outcome: RequestOutcome) -> tuple:
    """An answer in the column order of JOURNAL_ANSWERS."""
    answer, attempt = outcome.answer, outcome.answer.attempt
    normalized, usage = answer.normalized, answer.normalized.usage
    return (outcome.request.request_key, attempt.attempt, attempt.run_id, normalized.text, answer.payload_json,
            normalized.model, content_hash(normalized.text), attempt.latency_ms, usage.prompt_tokens,
            usage.completion_tokens, usage.total_tokens, attempt.finished_at, normalized.outcome,
            normalized.finish_reason, normalized.reasoning_text, [asdict(c) for c in normalized.citations],
            normalized.search_used, usage.cached_tokens, usage.reasoning_tokens, usage.search_count, answer.cost,
            answer.currency, normalized.system_fingerprint, normalized.search_queries)
