"""The warehouse resource: the lake (lake.py) with the pipeline's typed operations.

Every write is one partition transaction (delete the partitions' rows, insert the new ones)
that starts over on a DuckLake commit conflict; readers see a partition entirely before or
entirely after it, and never wait for it.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import date as Day
from pathlib import Path
from typing import TypeVar

import duckdb
import pyarrow as pa
from dagster import ConfigurableResource, EnvVar

from visibility_assets.core.partitions import Partition
from visibility_assets.warehouse.db import (
    bind,
    delete_run_partitions,
    ensure_table,
    fill_run_partitions,
    has_tables,
    insert_batch,
    tables_holding,
)
from visibility_assets.warehouse.lake import (
    S3_KEY_ENV,
    S3_SECRET_ENV,
    LakeSettings,
    one_snapshot,
    reading,
    write_with_retry,
)
from visibility_assets.warehouse.tables import (
    CLEANED_TABLES,
    COLLECTION_REQUESTS,
    COLLECTION_RUNS,
    COLLECTION_TABLES,
    HTTP_ATTEMPTS,
    JOURNAL_TABLES,
    JUDGE_TABLES,
    RAW_AI_RESPONSES,
    TABLES,
)

T = TypeVar("T")

# Publishing a partition: its rows in the three collection tables are replaced by the journal's,
# each table taking the columns it has. One answer per request key, whatever the journal holds.
# The journal's rows are read before the writers' turn (only the partition's collector writes
# them, and it has finished): the turn then only deletes and inserts.
PUBLISHED_TABLES = (RAW_AI_RESPONSES, COLLECTION_REQUESTS, HTTP_ATTEMPTS)
JOURNAL_ROWS = (
    """SELECT COLUMNS(lambda c: list_contains($raw_columns, c))
       FROM journal_answers JOIN journal_requests USING (request_key, date, platform)
       WHERE date = $date AND platform = $platform
       QUALIFY row_number() OVER (PARTITION BY request_key ORDER BY received_at) = 1""",
    """SELECT COLUMNS(lambda c: list_contains($request_columns, c)) FROM journal_requests
       WHERE date = $date AND platform = $platform""",
    """SELECT COLUMNS(lambda c: list_contains($attempt_columns, c)) FROM journal_attempts
       WHERE date = $date AND platform = $platform""",
)  # one per PUBLISHED_TABLES


# Tables written partition by partition (date x platform) through replace_partitions.
PARTITIONED_TABLES = frozenset(table.name for table in CLEANED_TABLES + JUDGE_TABLES)


@dataclass(frozen=True)
class Published:
    """A partition's collection, published."""

    answers: int  # the answers the partition holds now
    planned_answers: int  # of them, answers to the run's planned request keys
    snapshot: int | None  # the lake snapshot the commit made


class WarehouseResource(ConfigurableResource):
    """The DuckLake warehouse: where its catalog and data are, and the keys to reach them."""

    catalog: str  # sqlite:FILE | postgres:CONNINFO (no password: PGPASSWORD)
    data_path: str
    s3_endpoint: str | None = None
    s3_region: str | None = None
    s3_key_id: str | None = None
    s3_secret: str | None = None
    s3_use_ssl: bool = True
    data_moved: bool = False  # the data left the path the catalog remembers (VISIBILITY_WAREHOUSE_DATA_MOVED)

    @classmethod
    def from_settings(cls, settings: LakeSettings) -> WarehouseResource:
        """The resource for these settings, with the S3 keys as EnvVar (never in the run's config)."""
        return cls(catalog=settings.catalog, data_path=settings.data_path, s3_endpoint=settings.s3_endpoint,
                   s3_region=settings.s3_region, s3_use_ssl=settings.s3_use_ssl, data_moved=settings.data_moved,
                   s3_key_id=EnvVar(S3_KEY_ENV) if settings.s3_key_id else None,
                   s3_secret=EnvVar(S3_SECRET_ENV) if settings.s3_secret else None)

    def settings(self) -> LakeSettings:
        return LakeSettings(self.catalog, self.data_path, self.s3_endpoint, self.s3_region, self.s3_key_id,
                            self.s3_secret, self.s3_use_ssl, self.data_moved)

    @contextmanager
    def read_only(self, as_of: str | int | None = None):
        """A read-only connection (at a snapshot or time when `as_of` is given); it never blocks a writer."""
        with reading(self.settings(), as_of) as conn:
            yield conn

    def write(self, work: Callable[[duckdb.DuckDBPyConnection], T]) -> tuple[T, int | None]:
        """`work` in one transaction, started over on a commit conflict; its result and snapshot."""
        return write_with_retry(self.settings(), work)

    def read(self, work: Callable[[duckdb.DuckDBPyConnection], T]) -> T:
        """`work` in one read transaction on a read-only connection, outside the writers' turn:
        what a writer computes from the lake before it takes its turn to write."""
        with self.read_only() as conn, one_snapshot(conn):
            return work(conn)

    def exists(self) -> bool:
        """Whether the embedded catalog has been created (a PostgreSQL one is assumed to be)."""
        settings = self.settings()
        return settings.catalog_kind != "sqlite" or Path(settings.catalog.partition(":")[2]).exists()

    def publish_collection(self, date: str, platform: str, planned_keys: list[str], run_row: dict) -> Published:
        """Replace the partition's collection rows with its journal's and append the run's row of
        collection_runs (a dict of its columns)."""
        params = {"date": date, "platform": platform, "raw_columns": RAW_AI_RESPONSES.columns,
                  "request_columns": COLLECTION_REQUESTS.columns, "attempt_columns": HTTP_ATTEMPTS.columns}

        def journal_rows(conn: duckdb.DuckDBPyConnection) -> list[pa.Table]:
            if not has_tables(conn, *(table.name for table in JOURNAL_TABLES)):
                return [table.batch([]) for table in PUBLISHED_TABLES]  # a partition never collected
            return [conn.execute(sql, bind(sql, params)).fetch_arrow_table() for sql in JOURNAL_ROWS]

        published = self.read(journal_rows)

        def work(conn: duckdb.DuckDBPyConnection) -> None:
            for table in COLLECTION_TABLES + JOURNAL_TABLES + (COLLECTION_RUNS,):
                ensure_table(conn, table)
            fill_run_partitions(conn, [Partition(Day.fromisoformat(date), platform)])
            holding = tables_holding(conn, [table.name for table in PUBLISHED_TABLES])
            insert_batch(conn, COLLECTION_RUNS, COLLECTION_RUNS.from_dicts([run_row]))
            for table, rows in zip(PUBLISHED_TABLES, published):
                delete_run_partitions(conn, table.name, holding)
                insert_batch(conn, table, rows)

        _, snapshot = self.write(work)
        answers = published[0].column("request_key").to_pylist()
        planned = set(planned_keys)
        return Published(len(answers), sum(key in planned for key in answers), snapshot)

    def replace_partitions(self, tables: dict[str, pa.Table], partitions: Sequence[Partition]) -> int | None:
        """Delete the partitions' rows from each table, then insert the new ones, atomically;
        returns the snapshot. A table that does not exist yet is created (warehouse/tables.py)."""
        for name in tables:
            if name not in PARTITIONED_TABLES:
                raise ValueError(f"{name} is not a partitioned warehouse table")

        def work(conn: duckdb.DuckDBPyConnection) -> None:
            fill_run_partitions(conn, partitions)
            holding = tables_holding(conn, list(tables))
            for name, table in tables.items():
                ensure_table(conn, TABLES[name])
                delete_run_partitions(conn, name, holding)
                insert_batch(conn, TABLES[name], table)

        return self.write(work)[1]

