"""Keeping the lake small: every commit writes at least one file, and every query on the lake
reads the catalog's list of live files and their column statistics (for every table, on every
scan: ~3 ms on a new lake, ~15 ms once a week of nightly files had piled up), so the files
and the snapshots that keep old files alive are what a night, a page and a backfill pay for.

One pass, after each night: apply the retention of the raw evidence (retention.yaml: raw
answers, attempts, journals, judge replies), delete the files earlier passes released, move
inlined rows into Parquet, merge small adjacent files (never past MERGED_FILE_BYTES, so that a
night rewrites a few megabytes whatever the history), rewrite files that deletions have mostly
emptied (a backfill replaces every partition), then expire snapshots: all of those older than
retention.yaml's `snapshots_days`, and, up to the previous pass, every snapshot but the last of
its day (Asia/Shanghai), so that `--as-of` reaches the end of each of those days and every
moment since the previous pass (maintenance_passes records each pass). The files the expired
snapshots released are deleted by the next pass: a reader still on them has a night's grace.
Last, an embedded (SQLite) catalog is rewritten without the row-id gaps and free pages all
those deletions leave (lake.compact_catalog).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta

import duckdb

from visibility_assets.config.retention import RetentionSettings
from visibility_assets.core.days import TIMEZONE
from visibility_assets.warehouse.db import bind, ensure_table, existing_tables, insert_batch
from visibility_assets.warehouse.lake import LAKE, LakeSettings, compact_catalog, write_with_retry
from visibility_assets.warehouse.tables import (
    COLLECTION_REQUESTS,
    HTTP_ATTEMPTS,
    JOURNAL_ANSWERS,
    JOURNAL_ATTEMPTS,
    JOURNAL_REQUESTS,
    MAINTENANCE_PASSES,
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
# A merged file stops growing past this size: a night's merge then rewrites at most this much of
# a table, and a cell's answers read one file of a few days (the pages prune files by date).
MERGED_FILE_BYTES = 8 * 2**20
# A file that deletions (a backfill's replaced partitions) have emptied this far is rewritten.
DELETED_SHARE_REWRITTEN = 0.5
CLEAN_UP_RELEASED = "CALL ducklake_cleanup_old_files('" + LAKE + "', older_than => $released_before)"
COMPACTION = (
    "CALL ducklake_flush_inlined_data('" + LAKE + "')",
    "CALL ducklake_merge_adjacent_files('" + LAKE + "', max_file_size => $max_file_size)",
    "CALL ducklake_rewrite_data_files('" + LAKE + "', delete_threshold => $deleted_share)",
)
# Every snapshot older than the retention, and, up to the previous pass's, every one but the last of
# its day: what came since the previous pass stays (a comparison before and after a backfill).
EXPIRED = """
SELECT snapshot_id FROM (
    SELECT snapshot_id, snapshot_time,
           row_number() OVER (PARTITION BY CAST(timezone($zone, snapshot_time) AS DATE)
                              ORDER BY snapshot_id DESC) AS newest_of_day,
           -- a subquery, not a window over every row: DuckDB's races (duckdb/duckdb#25713)
           (SELECT max(snapshot_id) FROM ducklake_snapshots('""" + LAKE + """')) AS latest
    FROM ducklake_snapshots('""" + LAKE + """'))
WHERE snapshot_id < latest AND (snapshot_time < $expire_before OR (newest_of_day > 1 AND snapshot_id <= $thinned_to))
ORDER BY snapshot_id
"""
EXPIRE = "CALL ducklake_expire_snapshots('" + LAKE + "', versions => $versions)"
DELETE_ORPHANS = "CALL ducklake_delete_orphaned_files('" + LAKE + "', older_than => $expire_before)"
PREVIOUS_PASS = "SELECT coalesce(max(snapshot_id), -1) FROM " + MAINTENANCE_PASSES.name
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


def maintain(settings: LakeSettings, today: date, retention: RetentionSettings | None = None,
             snapshot_retention_days: int | None = None) -> MaintenanceFigures:
    """Retention first (its deletions then leave the files with the expired snapshots), then
    the files: what earlier passes released deleted, merged, rewritten, snapshots expired.
    `snapshot_retention_days` overrides retention.yaml's snapshots_days."""
    retention = retention or RetentionSettings()
    started = datetime.now(UTC)

    def stored_files(conn: duckdb.DuckDBPyConnection) -> tuple[int, int, int]:
        stored = conn.execute(STORED, {"pattern": settings.data_path + "**/*.parquet"}).fetchone()[0]
        live, size = conn.execute(FILES).fetchone()
        return stored, live, size

    def run(statement: str, params: dict | None = None) -> list:
        return write_with_retry(settings, lambda conn: conn.execute(statement, params).fetchall())[0]

    (files_before, live_before, bytes_before), _ = write_with_retry(settings, stored_files)
    deleted, _ = write_with_retry(settings, lambda conn: apply_retention(conn, retention, today))
    run(CLEAN_UP_RELEASED, {"released_before": started})
    for statement in COMPACTION:
        run(statement, bind(statement, {"max_file_size": MERGED_FILE_BYTES, "deleted_share": DELETED_SHARE_REWRITTEN}))
    days = retention.snapshots_days if snapshot_retention_days is None else snapshot_retention_days
    expire_before = datetime.combine(today - timedelta(days=days), datetime.min.time(), tzinfo=UTC)
    thinned_to = write_with_retry(settings, previous_pass)[0]
    versions = [row[0] for row in run(EXPIRED, {"zone": TIMEZONE, "expire_before": expire_before,
                                                "thinned_to": thinned_to})]
    if versions:
        run(EXPIRE, {"versions": versions})
    run(DELETE_ORPHANS, {"expire_before": expire_before})
    (files_after, live_after, bytes_after), _ = write_with_retry(settings, stored_files)
    write_with_retry(settings, lambda conn: record_pass(conn, live_after, len(versions)))
    compact_catalog(settings)  # after the pass's own deletions in the catalog
    return MaintenanceFigures(files_before, files_after, live_before, live_after, bytes_before, bytes_after,
                              len(versions), deleted)


def previous_pass(conn: duckdb.DuckDBPyConnection) -> int:
    """The latest snapshot when the previous pass ended (-1 before the first pass)."""
    ensure_table(conn, MAINTENANCE_PASSES)
    return conn.execute(PREVIOUS_PASS).fetchone()[0]


def record_pass(conn: duckdb.DuckDBPyConnection, live_files: int, expired: int) -> None:
    snapshot = conn.execute("FROM " + LAKE + ".current_snapshot()").fetchone()[0]
    insert_batch(conn, MAINTENANCE_PASSES, MAINTENANCE_PASSES.batch([(datetime.now(UTC), snapshot, live_files,
                                                                      expired)]))


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
