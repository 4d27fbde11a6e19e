"""Keeping the lake small: every commit writes at least one file, so small files add up.

One pass: apply the retention of the raw evidence (retention.yaml: raw answers, attempts,
journals, judge replies), move inlined rows into Parquet, merge small adjacent files, expire
snapshots past the snapshot retention (time travel reaches back that far, and a deleted row
with it), then delete the files no snapshot references any more.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date, timedelta

import duckdb

from visibility_assets.config.retention import RetentionSettings
from visibility_assets.warehouse.db import existing_tables
from visibility_assets.warehouse.lake import LAKE, LakeSettings, write_with_retry
from visibility_assets.warehouse.tables import (
    COLLECTION_REQUESTS,
    HTTP_ATTEMPTS,
    JOURNAL_ANSWERS,
    JOURNAL_ATTEMPTS,
    JOURNAL_REQUESTS,
    RAW_AI_RESPONSES,
)

# What each retention setting removes (config/retention.py): (table, which partitions), where
# "platforms" are the collected platforms' and "judge" the judge's journal partitions (judge:*).
RETENTION = {
    "raw_answers_days": ((RAW_AI_RESPONSES, "all"), (JOURNAL_ANSWERS, "platforms")),
    "http_attempts_days": ((HTTP_ATTEMPTS, "all"), (JOURNAL_ATTEMPTS, "all")),
    "journals_days": ((COLLECTION_REQUESTS, "all"), (JOURNAL_REQUESTS, "platforms")),
    "judge_replies_days": ((JOURNAL_ANSWERS, "judge"), (JOURNAL_REQUESTS, "judge")),
}
WHICH = {"all": "", "platforms": " AND platform NOT LIKE 'judge:%'", "judge": " AND platform LIKE 'judge:%'"}
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
    rows_deleted: dict[str, int]  # by retention: table -> rows removed

    @property
    def raw_rows_deleted(self) -> int:
        return self.rows_deleted.get(RAW_AI_RESPONSES.name, 0)

    def as_metadata(self) -> dict:
        return {**self.__dict__, "raw_rows_deleted": self.raw_rows_deleted}


def maintain(settings: LakeSettings, today: date, snapshot_retention_days: int = 7,
             retention: RetentionSettings | None = None) -> MaintenanceFigures:
    """Retention first (its deletions then leave the files with the expired snapshots), then
    the files: flushed, merged, expired, cleaned up."""
    def stored_files(conn: duckdb.DuckDBPyConnection) -> tuple[int, int, int]:
        stored = conn.execute(STORED, {"pattern": settings.data_path + "**/*.parquet"}).fetchone()[0]
        live, size = conn.execute(FILES).fetchone()
        return stored, live, size

    (files_before, live_before, bytes_before), _ = write_with_retry(settings, stored_files)
    deleted, _ = write_with_retry(settings, lambda conn: apply_retention(conn, retention or RetentionSettings(), today))
    expire_before = today - timedelta(days=snapshot_retention_days)
    expired = 0
    for statement in STEPS:
        params = {"expire_before": expire_before} if "$expire_before" in statement else None
        rows, _ = write_with_retry(settings, lambda conn, s=statement, p=params: conn.execute(s, p).fetchall())
        if "expire_snapshots" in statement:
            expired = len(rows)
    (files_after, live_after, bytes_after), _ = write_with_retry(settings, stored_files)
    return MaintenanceFigures(files_before, files_after, live_before, live_after, bytes_before, bytes_after,
                              expired, deleted)


def apply_retention(conn: duckdb.DuckDBPyConnection, retention: RetentionSettings, today: date) -> dict[str, int]:
    """Delete the rows of days before each setting's limit (0: keep for ever); rows deleted by table."""
    present = existing_tables(conn)
    deleted: dict[str, int] = {}
    for setting, targets in RETENTION.items():
        days = getattr(retention, setting)
        if not days:
            continue
        for table, which in targets:
            if table.name not in present:
                continue
            (count,) = conn.execute("DELETE FROM " + table.name + " WHERE date < $keep_from" + WHICH[which],
                                    {"keep_from": today - timedelta(days=days)}).fetchone()
            deleted[table.name] = deleted.get(table.name, 0) + count
    return deleted
