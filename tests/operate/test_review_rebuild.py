"""A review reaches the metrics: the review sensor asks for the reviewed partition to be cleaned
and measured again (a real Dagster run, asking no platform), and the day's figures then count
the reviewer's labels; a re-analysis keeps them."""

import pytest
from dagster import DagsterInstance, build_sensor_context

from tests.pipeline import materialize_for, pipeline, read_warehouse, resources
from visibility_assets.core.paths import data_dir
from visibility_assets.operate.automation import review_sensor
from visibility_assets.review.queue import machine_labels
from visibility_assets.review.store import RANDOM, ReviewStore

DAY, PLATFORM, BRAND = "2026-11-07", "deepseek", "阿里云"
FIGURES = ("SELECT mentioned_answers, valid_answers, reviewed_answers FROM mention_metrics"
           " WHERE brand = ? AND date = ? AND platform = ?")


@pytest.mark.dagster
def test_a_false_mention_a_reviewer_removes_leaves_the_mention_rate_of_its_day(visibility_home, config_dir, simulated):
    assert materialize_for(["mention_metrics"], DAY, PLATFORM).success
    with read_warehouse() as conn:
        (key,) = conn.execute("SELECT request_key FROM int_brand_results WHERE brand = ? AND date = ? AND platform = ?"
                              " AND mentioned ORDER BY request_key LIMIT 1", [BRAND, DAY, PLATFORM]).fetchone()
        mentioned, valid, reviewed = conn.execute(FIGURES, [BRAND, DAY, PLATFORM]).fetchone()
        machine = machine_labels(conn, key, BRAND, DAY, PLATFORM)
    assert reviewed == 0
    store = ReviewStore.under(data_dir())
    store.deal("ana", key, BRAND, RANDOM)
    store.record("ana", RANDOM, machine, {"mentioned": False, "mention_count": 0, "list_rank": None,
                                          "recommended": None, "sentiment": None})

    instance = DagsterInstance.ephemeral()
    result = review_sensor(build_sensor_context(instance=instance, resources=resources()))
    (request,) = result.run_requests
    assert request.job_name == "reanalysis_job" and request.partition_key == f"{DAY}|{PLATFORM}"
    run = pipeline().resolve_job_def("reanalysis_job").execute_in_process(
        instance=instance, partition_key=request.partition_key, tags=request.tags)
    assert run.success
    with read_warehouse() as conn:
        assert conn.execute(FIGURES, [BRAND, DAY, PLATFORM]).fetchone() == (mentioned - 1, valid, 1)
        assert conn.execute("SELECT mentioned, sentiment_source FROM int_brand_results WHERE request_key = ?"
                            " AND brand = ?", [key, BRAND]).fetchone() == (False, None)

    quiet = review_sensor(build_sensor_context(instance=instance, resources=resources(), cursor=result.cursor))
    assert not quiet.run_requests  # nothing new reviewed
