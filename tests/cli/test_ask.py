"""`visibility ask`: ad-hoc questions collected now into a day's partition, under request keys of
their own, after the platform's other run has ended."""

import os
import socket
import subprocess
import sys
from datetime import UTC, datetime

import httpx
import pytest
from dagster import DagsterRunStatus

from tests.cli import visibility
from tests.pipeline import materialize_for, pipeline, read_warehouse
from visibility_assets.core.partitions import partition_tags
from visibility_assets.operate.instance import get_instance

DAY = "2026-11-05"


def _ask(*args) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "visibility_assets.cli", "ask", *args], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env=dict(os.environ))


def _received(simulator, platform: str) -> int:
    return httpx.get(f"{simulator.url}/_stats").json().get(platform, {}).get("received", 0)


def _rows(sql: str, params: dict | None = None):
    with read_warehouse() as conn:
        return conn.execute(sql, params or {}).fetchall()


@pytest.mark.system  # the command in its own process, against the simulator on loopback
def test_ask_waits_for_the_platforms_run_then_adds_rounds_of_its_own(visibility_home, loopback_config_dir, simulator):
    defs, instance = pipeline(), get_instance()
    assert materialize_for(["raw_ai_responses"], DAY, "qwen", defs=defs).success  # the night's answers
    nightly_keys = {key for (key,) in _rows("SELECT request_key FROM raw_ai_responses")}
    sent_before = _received(simulator, "qwen")
    # Another run of qwen is in progress: ask must not start beside it (one run per platform).
    blocker = instance.create_run_for_job(defs.resolve_job_def("nightly_platform_job"),
                                          status=DagsterRunStatus.STARTED, tags=partition_tags("2026-11-06", "qwen"))

    ask = _ask("--platform", "qwen", "--question", "q001,q002", "--rounds", "2", "--date", DAY)
    first = "".join(ask.stdout.readline() for _ in range(3))  # the task, its expected cost, the wait
    assert "expected cost: " in first and " CNY for 4 answer(s)" in first, first  # said before it sends
    assert "waiting for run" in first and blocker.run_id in first, first
    assert _received(simulator, "qwen") == sent_before
    released = datetime.now(UTC)
    instance.report_run_failed(instance.get_run_by_id(blocker.run_id))
    out, err = ask.communicate(timeout=240)
    assert ask.returncode == 0, first + out + err

    assert _received(simulator, "qwen") - sent_before == 4
    # Nothing was sent, and no run of the ask began, while the platform's other run was on.
    [(first_sent,)] = _rows("SELECT min(a.started_at) FROM http_attempts AS a JOIN raw_ai_responses AS r"
                            " USING (request_key) WHERE r.task_id IS NOT NULL")
    assert first_sent >= released
    ask_runs = [r for r in instance.get_runs() if r.tags.get("visibility/task")]
    assert len(ask_runs) == 1
    assert instance.get_run_record_by_id(ask_runs[0].run_id).create_timestamp >= released
    asked = _rows("SELECT request_key, question_id, round, task_id FROM raw_ai_responses"
                  " WHERE task_id IS NOT NULL ORDER BY question_id, round")
    assert [(q, r) for _, q, r, _ in asked] == [("q001", 3), ("q001", 4), ("q002", 3), ("q002", 4)]
    assert not {key for key, *_ in asked} & nightly_keys
    assert len(_rows("SELECT * FROM raw_ai_responses")) == len(nightly_keys) + 4
    [(kind, state, reason)] = _rows("SELECT t.kind, t.state, e.reason FROM collection_tasks AS t"
                                    " JOIN collection_events AS e ON list_contains(t.event_ids, e.event_id)")
    assert (kind, state) == ("adhoc", "done") and reason.startswith("visibility ask")


def test_ask_for_an_unknown_question_is_an_error_that_writes_nothing(visibility_home, config_dir, simulated):
    result = visibility("ask", "--platform", "qwen", "--question", "q001,q999", "--date", DAY)
    assert result.returncode == 2 and "q999" in result.stderr, result.stderr
    assert simulated.app.stats_json() == {}
    assert not (visibility_home / "warehouse").exists()


@pytest.mark.dagster  # the instance's runs; the command in the test's process
def test_ask_says_which_run_it_waits_for_and_gives_up_after_its_wait(visibility_home, config_dir):
    defs, instance = pipeline(), get_instance()
    blocker = instance.create_run_for_job(defs.resolve_job_def("nightly_platform_job"),
                                          status=DagsterRunStatus.STARTED, tags=partition_tags(DAY, "qwen"))
    result = visibility("ask", "--platform", "qwen", "--question", "q001", "--date", DAY, "--wait", "2")
    assert result.returncode == 2, result.stdout + result.stderr
    assert f"waiting for run {blocker.run_id} of qwen (in progress since" in result.stdout
    assert "giving up at" in result.stdout
    assert f"run {blocker.run_id} of qwen" in result.stderr and "still in progress after 2 s" in result.stderr
    [(state, note)] = _rows("SELECT state, history[-1].note FROM collection_tasks")
    assert state == "failed" and "gave up waiting" in note
    assert instance.get_run_by_id(blocker.run_id).status == DagsterRunStatus.STARTED  # not ours to end


@pytest.mark.dagster
def test_a_run_whose_command_died_is_marked_failed_and_its_task_requeued(visibility_home, config_dir):
    defs, instance = pipeline(), get_instance()
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()  # a pid that no process holds any more
    orphan = instance.create_run_for_job(
        defs.resolve_job_def("nightly_platform_job"), status=DagsterRunStatus.STARTED,
        tags={**partition_tags(DAY, "qwen"), "visibility/host": socket.gethostname(), "visibility/pid": str(dead.pid)})
    result = visibility("ask", "--platform", "qwen", "--question", "q001", "--date", DAY, "--wait", "60")
    assert result.returncode == 0, result.stdout + result.stderr
    assert f"run {orphan.run_id} of qwen: the process that ran it is gone; marked failed" in result.stdout
    assert instance.get_run_by_id(orphan.run_id).status == DagsterRunStatus.FAILURE
