"""`visibility ask`: ad-hoc questions collected now into a day's partition, under request keys of
their own, after the platform's other run has ended."""

import os
import subprocess
import sys
import time

import httpx
import pytest
from dagster import DagsterRunStatus

from tests.pipeline import pipeline, read_warehouse
from visibility_assets.core.partitions import partition_tags
from visibility_assets.operate.instance import get_instance
from visibility_assets.runs import materialize_partition

pytestmark = pytest.mark.slow  # a simulator, Dagster runs, the command in its own process

DAY = "2026-11-05"


def _ask(*args) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "visibility_assets.cli", "ask", *args], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env=dict(os.environ))


def _received(simulator, platform: str) -> int:
    return httpx.get(f"{simulator.url}/_stats").json().get(platform, {}).get("received", 0)


def _rows(sql: str, params: dict | None = None):
    with read_warehouse() as conn:
        return conn.execute(sql, params or {}).fetchall()


def test_ask_waits_for_the_platforms_run_then_adds_rounds_of_its_own(visibility_home, config_dir, simulator):
    defs, instance = pipeline(), get_instance()
    assert materialize_partition(defs, DAY, "qwen", instance).success
    nightly_keys = {key for (key,) in _rows("SELECT request_key FROM raw_ai_responses")}
    sent_before = _received(simulator, "qwen")
    # Another run of qwen is in progress: ask must not start beside it (one run per platform).
    blocker = instance.create_run_for_job(defs.resolve_job_def("nightly_platform_job"),
                                          status=DagsterRunStatus.STARTED, tags=partition_tags("2026-11-06", "qwen"))

    ask = _ask("--platform", "qwen", "--question", "q001,q002", "--rounds", "2", "--date", DAY)
    first = ask.stdout.readline() + ask.stdout.readline()
    assert "waiting for run" in first and blocker.run_id in first, first
    time.sleep(3)
    assert _received(simulator, "qwen") == sent_before  # nothing sent while the platform is busy
    instance.report_run_failed(instance.get_run_by_id(blocker.run_id))
    out, err = ask.communicate(timeout=240)
    assert ask.returncode == 0, first + out + err

    assert _received(simulator, "qwen") - sent_before == 4
    asked = _rows("SELECT request_key, question_id, round, task_id FROM raw_ai_responses"
                  " WHERE task_id IS NOT NULL ORDER BY question_id, round")
    assert [(q, r) for _, q, r, _ in asked] == [("q001", 3), ("q001", 4), ("q002", 3), ("q002", 4)]
    assert not {key for key, *_ in asked} & nightly_keys
    assert len(_rows("SELECT * FROM raw_ai_responses")) == len(nightly_keys) + 4
    [(kind, state, reason)] = _rows("SELECT t.kind, t.state, e.reason FROM collection_tasks AS t"
                                    " JOIN collection_events AS e ON list_contains(t.event_ids, e.event_id)")
    assert (kind, state) == ("adhoc", "done") and reason.startswith("visibility ask")


def test_ask_for_an_unknown_question_is_an_error_that_writes_nothing(visibility_home, config_dir, simulator):
    ask = _ask("--platform", "qwen", "--question", "q001,q999", "--date", DAY)
    out, err = ask.communicate(timeout=120)
    assert ask.returncode == 2 and "q999" in err and "Traceback" not in err, err
    assert _received(simulator, "qwen") == 0
    assert not (visibility_home / "warehouse").exists() or not _rows(
        "SELECT * FROM information_schema.tables WHERE table_name = 'collection_events'")
