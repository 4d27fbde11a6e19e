"""raw_ai_responses materialized for real: Dagster runs against the simulator over loopback."""

import json
import os
import subprocess
import sys

import httpx
import pytest

from tests.pipeline import pipeline, read_warehouse
from visibility_assets.config import load_config
from visibility_assets.operate.instance import get_instance
from visibility_assets.runs import materialize_partition

pytestmark = pytest.mark.slow  # servers, processes or Dagster runs: the CI tier

DAY = "2026-11-01"


def _stats(simulator) -> dict:
    return httpx.get(f"{simulator.url}/_stats").json()


def _rows(sql, params=()):
    with read_warehouse() as conn:
        return conn.execute(sql, params).fetchall()


def test_partition_stores_one_verbatim_answer_per_request_key(visibility_home, config_dir, simulator):
    config = load_config()
    run = materialize_partition(pipeline(), DAY, "deepseek", get_instance())
    assert run.success, run.error
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
    assert _stats(simulator)["deepseek"]["duplicates"] == 0


def test_rematerializing_sends_nothing_and_keeps_exactly_one_row_per_key(visibility_home, config_dir, simulator):
    instance = get_instance()
    first = materialize_partition(pipeline(), DAY, "qwen", instance)
    received = _stats(simulator)["qwen"]["received"]
    before = _rows("SELECT request_key, content_hash, run_id FROM raw_ai_responses ORDER BY 1")

    second = materialize_partition(pipeline(), DAY, "qwen", instance)
    assert first.success and second.success
    assert _stats(simulator)["qwen"]["received"] == received  # nothing asked twice
    assert _rows("SELECT request_key, content_hash, run_id FROM raw_ai_responses ORDER BY 1") == before
    meta = second.metadata["raw_ai_responses"]
    assert meta["skipped_already_done"] == meta["planned"] and meta["http_attempts"] == 0


def test_runs_carry_the_partition_dimension_tags(visibility_home, config_dir, simulator):
    instance = get_instance()
    run = materialize_partition(pipeline(), DAY, "kimi", instance)
    tags = instance.get_run_by_id(run.run_id).tags
    assert tags["dagster/partition/date"] == DAY
    assert tags["dagster/partition/platform"] == "kimi"


def test_two_platforms_materialize_concurrently_in_two_processes(visibility_home, config_dir, simulator):
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


def test_a_range_run_collects_each_platform_day_once_with_platforms_side_by_side(visibility_home, config_dir, simulator):
    """A single-run backfill of the nightly job: every partition of the range in one run."""
    from dagster import DagsterInstance

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
    assert _stats(simulator)["deepseek"]["duplicates"] == 0
    assert _rows("SELECT count(DISTINCT date) FROM mention_metrics WHERE platform = 'deepseek'") == [(2,)]
