"""Keeping the lake small: every commit writes at least one file, so small files add up.

One pass: apply the raw-answer retention (default: keep forever), move inlined rows into
Parquet, merge small adjacent files, expire snapshots past the snapshot retention (time travel
reaches back that far), then delete the files no snapshot references any more.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date, timedelta

import duckdb

from visibility_assets.warehouse.lake import LAKE, LakeSettings, write_with_retry
from visibility_assets.warehouse.tables import JOURNAL_TABLES, RAW_AI_RESPONSES

# What raw-answer retention removes: the answers and the journal rows they were published from.
RETAINED_BY_DATE = (RAW_AI_RESPONSES.name,) + tuple(table.name for table in JOURNAL_TABLES)
STEPS = (
    "CALL ducklake_flush_inlined_data('" + LAKE + "')",
    "CALL ducklake_merge_adjacent_files('" + LAKE + "')",
    "CALL ducklake_expire_snapshots('" + LAKE + "', older_than => $expire_before)",
    "CALL ducklake_cleanup_old_files('" + LAKE + "', cleanup_all => true)",
    "CALL ducklake_delete_orphaned_files('" + LAKE + "', older_than => $expire_before)",
)
FILES = ("SELECT count(*), coalesce(sum(file_size_bytes), 0) FROM __ducklake_metadata_" + LAKE
         + ".ducklake_data_file WHERE end_snapshot IS NULL")
STORED = "SELECT count(*) FROM glob($pattern)"


@dataclass
class MaintenanceFigures:
    files_before: int  # Parquet files in the data path
    files_after: int
    live_files_before: int  # data files the current snapshot reads
    live_files_after: int
    live_bytes_before: int
    live_bytes_after: int
    snapshots_expired: int
    raw_rows_deleted: int

    def as_metadata(self) -> dict:
        return dict(self.__dict__)


def maintain(settings: LakeSettings, today: date, snapshot_retention_days: int = 7,
             raw_retention_days: int | None = None) -> MaintenanceFigures:
    def stored_files(conn: duckdb.DuckDBPyConnection) -> tuple[int, int, int]:
        stored = conn.execute(STORED, {"pattern": settings.data_path + "**/*.parquet"}).fetchone()[0]
        live, size = conn.execute(FILES).fetchone()
        return stored, live, size

    (files_before, live_before, bytes_before), _ = write_with_retry(settings, stored_files)
    deleted = 0
    if raw_retention_days is not None:
        deleted, _ = write_with_retry(settings, lambda conn: _apply_retention(
            conn, today - timedelta(days=raw_retention_days)))
    expire_before = today - timedelta(days=snapshot_retention_days)
    expired = 0
    for statement in STEPS:
        params = {"expire_before": expire_before} if "$expire_before" in statement else None
        rows, _ = write_with_retry(settings, lambda conn: conn.execute(statement, params).fetchall())
        if "expire_snapshots" in statement:
            expired = len(rows)
    (files_after, live_after, bytes_after), _ = write_with_retry(settings, stored_files)
    return MaintenanceFigures(files_before, files_after, live_before, live_after, bytes_before, bytes_after,
                              expired, deleted)


def _apply_retention(conn: duckdb.DuckDBPyConnection, keep_from: date) -> int:
    """Delete raw answers (and their journal rows) of days before `keep_from`; returns answers deleted."""
    deleted = conn.execute("DELETE FROM " + RAW_AI_RESPONSES.name + " WHERE date < $keep_from",
                           {"keep_from": keep_from}).fetchall()[0][0]
    for name in RETAINED_BY_DATE[1:]:
        conn.execute("DELETE FROM " + name + " WHERE date < $keep_from", {"keep_from": keep_from}).fetchall()
    return deleted
