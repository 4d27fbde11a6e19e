"""The weekly lake maintenance: fewer files, the same rows, and the raw-answer retention."""

import pytest
from dagster import DagsterInstance

from tests.pipeline import materialize_for, pipeline, read_warehouse
from visibility_assets.tools.simulator.transport import IN_PROCESS_URL

from .conftest import write_config

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
    """Paced as the demo is, each checkpoint of a partition's requests writes a small file."""
    config_dir = write_config(tmp_path / "config", IN_PROCESS_URL, questions=15, rounds=2, rate_limit_rps=6)
    monkeypatch.setenv("VISIBILITY_CONFIG_DIR", str(config_dir))
    assert materialize_for(["mention_metrics"], DAYS[0], "deepseek").success
    before = _counts()
    figures = _maintain()
    print("maintenance:", figures)  # the closing note quotes these
    assert figures["files_after"] < figures["files_before"]
    assert _counts() == before


def test_raw_retention_deletes_the_answers_of_older_days_only(visibility_home, config_dir):
    assert materialize_for(["mention_metrics"], DAYS[0], "kimi").success
    kept = _counts()
    figures = _maintain({"ops": {"lake_maintenance": {"config": {"raw_retention_days": 36500}}}})
    assert figures["raw_rows_deleted"] == 0 and _counts() == kept
    figures = _maintain({"ops": {"lake_maintenance": {"config": {"raw_retention_days": 1}}}})
    assert figures["raw_rows_deleted"] == kept["raw_ai_responses"]
    after = _counts()
    assert after["raw_ai_responses"] == after["journal_attempts"] == 0
    assert after["mention_metrics"] == kept["mention_metrics"]  # the metrics stay
