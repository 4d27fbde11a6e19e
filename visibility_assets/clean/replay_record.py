"""Recording a replay: one summary row per (platform, date) in analyzer_replays.

No SQL model reads this table (dbt_like_sql/ never refs it), so recording a replay changes no
metric; a quality panel reads it to follow an analyzer upgrade's diff share over time.
"""

from __future__ import annotations

import json

import duckdb
import pyarrow as pa

from visibility_assets.clean.replay_diff import ReplayFindings
from visibility_assets.warehouse.db import ensure_table, insert_batch
from visibility_assets.warehouse.lake import LakeSettings, write_with_retry
from visibility_assets.warehouse.tables import ANALYZER_REPLAYS


def replay_rows(report: ReplayFindings) -> pa.Table:
    """The report's (platform, date) tallies as analyzer_replays rows; days with no answer
    compared (all of another config version) have none."""
    rows = [(report.replay_id, report.replayed_at, platform, day, report.config_version,
             ",".join(sorted(tally.stored_analyzer_versions)) or None, report.analyzer_version,
             tally.answers, tally.changed, tally.diff_share, json.dumps(tally.by_field(), ensure_ascii=False))
            for (platform, day), tally in sorted(report.days.items()) if tally.answers]
    return ANALYZER_REPLAYS.batch(rows)


def record_replay(settings: LakeSettings, report: ReplayFindings) -> int:
    """Append the report's rows in one transaction; returns how many."""
    rows = replay_rows(report)
    if not rows.num_rows:
        return 0

    def append(conn: duckdb.DuckDBPyConnection) -> None:
        ensure_table(conn, ANALYZER_REPLAYS)
        insert_batch(conn, ANALYZER_REPLAYS, rows)

    write_with_retry(settings, append)
    return rows.num_rows
