"""The production instance config (PostgreSQL storage) with a real server on 127.0.0.1:5432.

Skipped with a message when no server answers, unless CI=true, where a missing server fails.
"""

import shutil
from datetime import datetime, timezone

import pytest
from dagster import AssetKey, DagsterInstance, build_schedule_context

from tests.pipeline import materialize_for, pipeline
from tests.services import dagster_pg_url, scratch_database
from visibility_assets.operate.instance import INSTANCE_YAML

pytestmark = pytest.mark.system



@pytest.fixture
def pg_url():
    with scratch_database("visibility_test") as name:
        yield dagster_pg_url(name)


@pytest.fixture
def pg_instance(pg_url, visibility_home, monkeypatch):
    home = visibility_home / "dagster_home"
    home.mkdir(parents=True)
    shutil.copy(INSTANCE_YAML["postgres"], home / "dagster.yaml")
    monkeypatch.setenv("VISIBILITY_PG_URL", pg_url)
    monkeypatch.setenv("DAGSTER_HOME", str(home))
    instance = DagsterInstance.get()
    yield instance
    instance.dispose()


def test_materialization_is_recorded_in_postgres(pg_instance, config_dir, simulated):
    assert type(pg_instance.run_storage).__name__ == "PostgresRunStorage"
    run = materialize_for(["cleaned_samples"], "2026-11-08", "ernie", pg_instance)
    assert run.success
    stored = pg_instance.get_run_by_id(run.run_id)
    assert stored.tags["dagster/partition/platform"] == "ernie"
    event = pg_instance.get_latest_materialization_event(AssetKey("cleaned_samples"))
    assert event is not None and event.dagster_event.partition == "2026-11-08|ernie"


def test_schedule_tick_against_postgres(pg_instance):
    context = build_schedule_context(instance=pg_instance,
                                     scheduled_execution_time=datetime(2026, 11, 30, 18, 0, tzinfo=timezone.utc))
    requests = list(pipeline().resolve_schedule_def("nightly_collection")(context))
    assert len(requests) == 6
    job = pipeline().resolve_job_def("nightly_platform_job")
    run = pg_instance.create_run_for_job(job, run_config=requests[0].run_config, tags=requests[0].tags,
                                         asset_selection=frozenset({AssetKey("raw_ai_responses")}))
    assert pg_instance.get_run_by_id(run.run_id).tags["dagster/partition/date"] == "2026-11-30"
