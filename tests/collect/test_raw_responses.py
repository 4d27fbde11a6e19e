"""raw_ai_responses materialized for real: Dagster runs against the simulated platforms (in
process; over loopback for the runs in other processes)."""

import json
import os
import subprocess
import sys

import pytest
from dagster import DagsterInstance, materialize

from tests.pipeline import pipeline, raw_asset, read_warehouse, resources
from visibility_assets.config import load_config
from visibility_assets.core.partitions import partition_key, partition_tags
from visibility_assets.operate.instance import get_instance
from visibility_assets.partition_run import materialize_partition

DAY = "2026-11-01"


def _stats(simulator) -> dict:
    return simulator.app.stats_json()


def _rows(sql, params=()):
    with read_warehouse() as conn:
        return conn.execute(sql, params).fetchall()


@pytest.mark.dagster
def test_partition_stores_one_verbatim_answer_per_request_key(visibility_home, config_dir, simulated):
    config = load_config()
    instance = get_instance()
    run = materialize_partition(pipeline(), DAY, "deepseek", instance)
    assert run.success, run.error
    tags = instance.get_run_by_id(run.run_id).tags  # the run carries the partition's dimensions
    assert (tags["dagster/partition/date"], tags["dagster/partition/platform"]) == (DAY, "deepseek")
    expected = len(config.questions) * config.platform("deepseek").rounds
    rows = _rows("SELECT request_key, answer_text, reasoning_text, payload_json, content_hash, run_id, model,"
                 " prompt_hash, total_tokens, latency_ms, attempt, outcome FROM raw_ai_responses"
                 " WHERE platform = 'deepseek'")
    assert len(rows) == expected
    assert len({r[0] for r in rows}) == expected
    for key, text, reasoning, payload, content_hash, run_id, model, prompt_hash, tokens, latency, attempt, outcome in rows:
        content = json.loads(payload)["choices"][0]["message"]["content"]  # the payload, verbatim
        # The answer is the content without a leading <think> block, which is kept as the reasoning.
        assert content == text if reasoning is None else content.endswith(text) and reasoning in content
        assert outcome == "answered"
        assert run_id == run.run_id and model == config.platform("deepseek").model and prompt_hash
        assert tokens > 0 and latency > 0 and attempt >= 1
    assert run.metadata["raw_ai_responses"]["answers_stored"] == expected
    assert _stats(simulated)["deepseek"]["duplicates"] == 0


@pytest.mark.dagster
def test_rematerializing_sends_nothing_and_keeps_exactly_one_row_per_key(visibility_home, config_dir, simulated):
    instance = DagsterInstance.ephemeral()
    first = materialize_raw("qwen", instance)
    received = _stats(simulated)["qwen"]["received"]
    before = _rows("SELECT request_key, content_hash, run_id FROM raw_ai_responses ORDER BY 1")

    second = materialize_raw("qwen", instance)
    assert first.success and second.success
    assert _stats(simulated)["qwen"]["received"] == received  # nothing asked twice
    assert _rows("SELECT request_key, content_hash, run_id FROM raw_ai_responses ORDER BY 1") == before
    meta = second.asset_materializations_for_node("raw_ai_responses")[0].metadata
    assert meta["skipped_already_done"].value == meta["planned"].value and meta["http_attempts"].value == 0


def materialize_raw(platform: str, instance):
    """The raw answers of one partition alone: what these tests are about."""
    return materialize([raw_asset()], partition_key=partition_key(DAY, platform), instance=instance,
                       resources=resources(), tags=partition_tags(DAY, platform), raise_on_error=False)


@pytest.mark.system
def test_two_platforms_materialize_concurrently_in_two_processes(visibility_home, loopback_config_dir, simulator):
    """Each process writes its own journal and holds the warehouse lock only to publish."""
    get_instance()  # creates $DAGSTER_HOME, as a user setting it up would
    env = {**os.environ}
    commands = [
        [sys.executable, "-m", "dagster", "asset", "materialize", "-m", "visibility_assets.definitions",
         "--select", "raw_ai_responses", "--partition", f"{DAY}|{platform}"]
        for platform in ("ernie", "doubao")
    ]
    processes = [subprocess.Popen(c, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
                 for c in commands]
    outputs = [p.communicate(timeout=240)[0] for p in processes]
    for process, output in zip(processes, outputs):
        assert process.returncode == 0, output[-3000:]
        assert "Could not set lock" not in output
    counts = dict(_rows("SELECT platform, count(*) FROM raw_ai_responses GROUP BY 1"))
    config = load_config()
    per_platform = len(config.questions) * config.platform("ernie").rounds
    assert counts == {"ernie": per_platform, "doubao": per_platform}


@pytest.mark.dagster
def test_a_range_run_collects_each_platform_day_once_with_platforms_side_by_side(visibility_home, config_dir, simulated):
    """A single-run backfill of the nightly job: every partition of the range in one run."""

    from visibility_assets.operate.automation import RANGE_END, RANGE_START

    config = load_config()
    result = pipeline().resolve_job_def("nightly_platform_job").execute_in_process(
        instance=DagsterInstance.ephemeral(), raise_on_error=False,
        tags={RANGE_START: "2026-11-01|deepseek", RANGE_END: "2026-11-02|deepseek"})
    assert result.success
    per_partition = len(config.questions) * config.platform("deepseek").rounds
    assert _rows("SELECT date::VARCHAR, platform, count(*), count(DISTINCT request_key) FROM raw_ai_responses"
                 " GROUP BY ALL ORDER BY 1, 2") == [("2026-11-01", "deepseek", per_partition, per_partition),
                                                   ("2026-11-02", "deepseek", per_partition, per_partition)]
    assert _stats(simulated)["deepseek"]["duplicates"] == 0
    assert _rows("SELECT count(DISTINCT date) FROM mention_metrics WHERE platform = 'deepseek'") == [(2,)]
