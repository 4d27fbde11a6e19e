"""The lake maintenance after each night: fewer files, the same rows, and the retention of the raw evidence."""

import sqlite3
from contextlib import closing
from datetime import timedelta

import pytest
from dagster import DagsterInstance

from tests.pipeline import materialize_for, pipeline, read_warehouse
from visibility_assets.core.days import yesterday
from visibility_assets.tools.simulator.transport import IN_PROCESS_URL
from visibility_assets.warehouse.lake import lake_settings

from tests.conftest import write_config

pytestmark = pytest.mark.dagster

DAYS = ("2026-11-08", "2026-11-09")


def _counts():
    with read_warehouse() as conn:
        return {table: conn.execute("SELECT count(*) FROM " + table).fetchone()[0]
                for table in ("raw_ai_responses", "cleaned_samples", "mention_metrics", "journal_attempts")}


def _maintain(run_config=None):
    result = pipeline().resolve_job_def("lake_maintenance_job").execute_in_process(
        instance=DagsterInstance.ephemeral(), run_config=run_config)
    assert result.success
    (materialization,) = result.asset_materializations_for_node("lake_maintenance")
    return {key: value.value for key, value in materialization.metadata.items()}


def test_maintenance_merges_small_files_and_keeps_every_row(visibility_home, simulated, tmp_path, monkeypatch):
    """Each partition's publish and each checkpoint of its requests writes small files of its own."""
    config_dir = write_config(tmp_path / "config", IN_PROCESS_URL, questions=15, rounds=2, rate_limit_rps=50)
    monkeypatch.setenv("VISIBILITY_CONFIG_DIR", str(config_dir))
    for platform in ("deepseek", "qwen"):
        assert materialize_for(["mention_metrics"], DAYS[0], platform).success
    before = _counts()
    figures = _maintain()
    print("maintenance:", figures)  # the closing note quotes these
    assert figures["live_files_after"] < figures["live_files_before"]
    assert _counts() == before
    # The files a merge released stay a pass for readers still on them; the next pass deletes them.
    again = _maintain()
    assert again["files_after"] < figures["files_after"]
    assert _counts() == before
    # With nothing new to merge, a pass leaves no dead file but the two its merge of the passes'
    # own records released (maintenance_passes: the merged file and the last pass's record).
    settled = _maintain()
    assert settled["live_files_after"] <= again["live_files_after"]
    assert settled["files_after"] - settled["live_files_after"] <= 2, settled
    assert _counts() == before
    # The catalog rewritten after the passes' deletions: the column statistics, its largest table,
    # numbered without gaps (DuckDB reads a SQLite catalog whole on every scan, planned by row ids).
    with closing(sqlite3.connect(lake_settings().catalog.partition(":")[2])) as catalog:
        assert catalog.execute("SELECT max(rowid) = count(*) FROM ducklake_file_column_stats").fetchone() == (1,)


def test_raw_retention_deletes_the_answers_of_older_days_only(visibility_home, config_dir):
    assert materialize_for(["mention_metrics"], DAYS[0], "kimi").success
    kept = _counts()
    figures = _maintain({"ops": {"lake_maintenance": {"config": {"raw_retention_days": 36500}}}})
    assert figures["raw_rows_deleted"] == 0 and _counts() == kept
    figures = _maintain({"ops": {"lake_maintenance": {"config": {"raw_retention_days": 1}}}})
    assert figures["raw_rows_deleted"] == kept["raw_ai_responses"]
    after = _counts()
    assert after["raw_ai_responses"] == 0
    assert after["mention_metrics"] == kept["mention_metrics"]  # the metrics stay
    assert after["journal_attempts"] == kept["journal_attempts"]  # attempts keep their own retention


TABLES = ("raw_ai_responses", "journal_answers", "http_attempts", "journal_attempts", "collection_requests",
          "journal_requests", "cleaned_samples", "judge_verdicts", "judge_calls", "mention_metrics")


def _rows_by_day():
    """Rows of each table per (table, day, the judge's journal or not)."""
    with read_warehouse() as conn:
        return {(table, day, judge): n for table in TABLES for day, judge, n in conn.execute(
            "SELECT date, " + ("platform LIKE 'judge:%'" if table.startswith("journal") else "false")
            + ", count(*) FROM " + table + " GROUP BY ALL").fetchall()}


def test_each_retention_removes_its_tables_rows_of_older_days_and_nothing_else(visibility_home, simulated,
                                                                                tmp_path, monkeypatch):
    config_dir = write_config(tmp_path / "config", IN_PROCESS_URL, questions=4, rounds=1)
    (config_dir / "judge.yaml").write_text("judge:\n  platform: deepseek\n", encoding="utf-8")
    monkeypatch.setenv("VISIBILITY_CONFIG_DIR", str(config_dir))
    today = yesterday() + timedelta(days=1)  # the maintenance's today
    old, recent = today - timedelta(days=30), today - timedelta(days=2)
    for day in (old, recent):
        assert materialize_for(["judge_verdicts", "mention_metrics"], day.isoformat(), "kimi").success
    before = _rows_by_day()
    assert {(t, j) for t, _, j in before} >= {("journal_answers", True), ("journal_attempts", True)}  # judged
    (config_dir / "retention.yaml").write_text(
        "retention:\n  raw_answers_days: 0\n  http_attempts_days: 10\n  journals_days: 0\n"
        "  judge_replies_days: 10\n", encoding="utf-8")
    figures = _maintain()
    gone = {key for key in before if key[1] == old and (
        key[0] in ("http_attempts", "journal_attempts") or key[0] in ("journal_answers", "journal_requests") and key[2])}
    assert _rows_by_day() == {key: n for key, n in before.items() if key not in gone}  # nothing else removed
    assert figures["rows_deleted"]["http_attempts"] == before[("http_attempts", old, False)]
    assert figures["raw_rows_deleted"] == 0  # raw answers are kept for ever here (0)
