"""The DuckDB warehouse (`warehouse.duckdb` in the data directory).

DuckDB lets one process write a file at a time, so every write here opens the
connection, does one transaction and closes it; dagster-duckdb's resource retries the
open while another process holds the lock. Partition writes delete then insert inside
one transaction, so re-running a partition replaces it exactly.
"""

from __future__ import annotations

from contextlib import contextmanager
from pathlib import Path

import duckdb
import pyarrow as pa
from dagster_duckdb import DuckDBResource

from .db import IN_RUN_PARTITIONS, bind, existing_tables, fill_run_partitions, open_read_only, transaction

RAW_SCHEMA = """
CREATE TABLE IF NOT EXISTS raw_ai_responses (
    request_key VARCHAR PRIMARY KEY,
    date DATE NOT NULL,
    platform VARCHAR NOT NULL,
    question_id VARCHAR NOT NULL,
    question_text VARCHAR NOT NULL,
    category VARCHAR NOT NULL,
    round INTEGER NOT NULL,
    model VARCHAR NOT NULL,
    params_json VARCHAR NOT NULL,
    prompt_hash VARCHAR NOT NULL,
    answer_text VARCHAR NOT NULL,
    payload_json VARCHAR NOT NULL,
    response_model VARCHAR,
    content_hash VARCHAR NOT NULL,
    latency_ms DOUBLE NOT NULL,
    prompt_tokens INTEGER,
    completion_tokens INTEGER,
    total_tokens INTEGER,
    attempt INTEGER NOT NULL,            -- the attempt (in http_attempts) that produced it
    run_id VARCHAR NOT NULL,             -- the Dagster run that collected it
    received_at TIMESTAMPTZ NOT NULL
);
CREATE TABLE IF NOT EXISTS collection_requests (
    request_key VARCHAR PRIMARY KEY,
    date DATE NOT NULL,
    platform VARCHAR NOT NULL,
    question_id VARCHAR NOT NULL,
    round INTEGER NOT NULL,
    priority INTEGER NOT NULL,
    state VARCHAR NOT NULL,
    attempts INTEGER NOT NULL,
    last_error_class VARCHAR,
    last_error VARCHAR,
    updated_at TIMESTAMPTZ NOT NULL
);
CREATE TABLE IF NOT EXISTS http_attempts (
    request_key VARCHAR NOT NULL,
    attempt INTEGER NOT NULL,
    run_id VARCHAR NOT NULL,
    date DATE NOT NULL,
    platform VARCHAR NOT NULL,
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
"""

PUBLISH_COLLECTION = (
    "DELETE FROM raw_ai_responses WHERE date = $date AND platform = $platform",
    "DELETE FROM collection_requests WHERE date = $date AND platform = $platform",
    "DELETE FROM http_attempts WHERE date = $date AND platform = $platform",
    """INSERT INTO raw_ai_responses
       SELECT r.request_key, r.date, r.platform, r.question_id, r.question_text, r.category, r.round,
              r.model, r.params_json, r.prompt_hash, a.answer_text, a.payload_json, a.response_model,
              a.content_hash, a.latency_ms, a.prompt_tokens, a.completion_tokens, a.total_tokens,
              a.attempt, a.run_id, a.received_at
       FROM journal.answers a JOIN journal.requests r USING (request_key)""",
    """INSERT INTO collection_requests
       SELECT request_key, date, platform, question_id, round, priority, state, attempts,
              last_error_class, last_error, updated_at
       FROM journal.requests""",
    """INSERT INTO http_attempts
       SELECT t.request_key, t.attempt, t.run_id, r.date, r.platform, t.started_at, t.finished_at,
              t.http_status, t.error_class, t.error_message, t.latency_ms, t.prompt_tokens,
              t.completion_tokens, t.total_tokens
       FROM journal.attempts t JOIN journal.requests r USING (request_key)""",
)

# Tables written partition by partition (date x platform) through replace_partitions.
PARTITIONED_TABLES = frozenset(
    ("cleaned_samples", "sample_brand_results", "entity_matches", "sample_state_history", "sample_quarantine"))


def execute_script(conn: duckdb.DuckDBPyConnection, statements, params: dict | None = None) -> None:
    """Run statements in order, each with only the named parameters it uses."""
    for statement in statements:
        conn.execute(statement, bind(statement, params or {}))


class WarehouseResource(DuckDBResource):
    """dagster-duckdb's resource plus the warehouse's typed operations."""

    @contextmanager
    def read_only(self):
        """A read-only connection that fails at once (duckdb.Error) while a run holds the file."""
        conn = open_read_only(Path(self.database))
        try:
            yield conn
        finally:
            conn.close()

    @contextmanager
    def transaction(self):
        Path(self.database).parent.mkdir(parents=True, exist_ok=True)
        with self.get_connection() as conn, transaction(conn):
            yield conn

    def publish_collection(self, journal_file: Path, date: str, platform: str) -> int:
        """Replace the partition's raw rows with the journal's; returns the answer count."""
        with self.transaction() as conn:
            conn.execute(RAW_SCHEMA)
            conn.execute("ATTACH ? AS journal (READ_ONLY)", [str(journal_file)])
            execute_script(conn, PUBLISH_COLLECTION, {"date": date, "platform": platform})
            conn.execute("DETACH journal")
            (count,) = conn.execute(
                "SELECT count(*) FROM raw_ai_responses WHERE date = ? AND platform = ?", [date, platform]
            ).fetchone()
        return count

    def replace_partitions(self, tables: dict[str, pa.Table], partitions: list[tuple[str, str]]) -> None:
        """Delete the partitions' rows from each table, then insert the new ones, atomically.

        A table that does not exist yet is created from its Arrow schema.
        """
        with self.transaction() as conn:
            existing = existing_tables(conn)
            fill_run_partitions(conn, partitions)
            for name, table in tables.items():
                if name not in PARTITIONED_TABLES:
                    raise ValueError(f"{name} is not a partitioned warehouse table")
                if name not in existing:
                    conn.from_arrow(table.slice(0, 0)).create(name)
                conn.execute("DELETE FROM " + name + " WHERE " + IN_RUN_PARTITIONS).fetchall()
                if table.num_rows:
                    conn.from_arrow(table).insert_into(name)
