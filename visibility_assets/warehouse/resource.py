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

from ..analyze.samples import SCHEMAS as CLEANED_SCHEMAS
from .db import IN_RUN_PARTITIONS, bind, ensure_table, existing_tables, fill_run_partitions, open_read_only, transaction
from .tables import COLLECTION_REQUESTS, COLLECTION_TABLES, HTTP_ATTEMPTS, RAW_AI_RESPONSES

# Publishing a journal: its partition's rows in the three collection tables are replaced by
# the journal's, each table taking the columns it has from the journal's tables.
PUBLISH_COLLECTION = (
    "DELETE FROM raw_ai_responses WHERE date = $date AND platform = $platform",
    "DELETE FROM collection_requests WHERE date = $date AND platform = $platform",
    "DELETE FROM http_attempts WHERE date = $date AND platform = $platform",
    """INSERT INTO raw_ai_responses BY NAME
       SELECT COLUMNS(lambda c: list_contains($raw_columns, c))
       FROM journal.answers JOIN journal.requests USING (request_key)""",
    """INSERT INTO collection_requests BY NAME
       SELECT COLUMNS(lambda c: list_contains($request_columns, c)) FROM journal.requests""",
    """INSERT INTO http_attempts BY NAME
       SELECT COLUMNS(lambda c: list_contains($attempt_columns, c))
       FROM journal.attempts JOIN journal.requests USING (request_key)""",
)

# Tables written partition by partition (date x platform) through replace_partitions.
PARTITIONED_TABLES = frozenset(CLEANED_SCHEMAS)


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
            for table in COLLECTION_TABLES:
                ensure_table(conn, table)
            conn.execute("ATTACH ? AS journal (READ_ONLY)", [str(journal_file)])
            execute_script(conn, PUBLISH_COLLECTION, {
                "date": date, "platform": platform, "raw_columns": RAW_AI_RESPONSES.columns,
                "request_columns": COLLECTION_REQUESTS.columns, "attempt_columns": HTTP_ATTEMPTS.columns})
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
