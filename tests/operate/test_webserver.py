"""The UI path for real: dagster-webserver and the daemon on loopback, partitions launched through
GraphQL. The module starts them once, over one data directory and a simulator on loopback at 4
requests per second per platform (each run collects for about 6 s); each test uses days and
platforms of its own."""

import os
import signal
import socket
import subprocess
import sys
import time
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest
from dagster import DagsterInstance

from visibility_assets.config import EXAMPLE_CONFIG_DIR, load_config
from visibility_assets.operate.instance import ensure_dagster_home
from visibility_assets.tools.simulator.behaviour import SimulatorSettings
from visibility_assets.tools.simulator.server import SimulatorServer
from visibility_assets.warehouse.lake import lake_settings, reading

from tests.conftest import FAST, write_config

pytestmark = pytest.mark.system

ROOT = Path(__file__).parents[2]
LAUNCH = """
mutation Launch($params: ExecutionParams!) {
  launchRun(executionParams: $params) {
    __typename
    ... on LaunchRunSuccess { run { runId } }
    ... on PythonError { message }
    ... on RunConfigValidationInvalid { errors { message } }
  }
}"""
RUN = """
query Run($runId: ID!) {
  runOrError(runId: $runId) { __typename ... on Run { status tags { key value } assetMaterializations { assetKey { path } partition } } }
}"""


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@dataclass
class UI:
    url: str  # the webserver's GraphQL endpoint
    simulator: SimulatorServer


@pytest.fixture(scope="module")
def ui(tmp_path_factory):
    root = tmp_path_factory.mktemp("ui")
    with pytest.MonkeyPatch.context() as env, \
            SimulatorServer(SimulatorSettings(seed=1, default=FAST), load_config(EXAMPLE_CONFIG_DIR)) as simulator:
        env.setenv("VISIBILITY_HOME", str(root / "home"))
        env.setenv("DAGSTER_HOME", str(root / "home" / "dagster_home"))
        env.setenv("VISIBILITY_CONFIG_DIR", str(write_config(root / "config", simulator.port, rate_limit_rps=4)))
        with _webserver_and_daemon() as url:
            yield UI(url, simulator)


@contextmanager
def _webserver_and_daemon():
    ensure_dagster_home()
    # The instance's SQLite storage is created here, once: the webserver, its code server and
    # the daemon starting side by side each tried to create it and raced on its migrations.
    with DagsterInstance.get() as instance:
        instance.upgrade()
    port = _free_port()
    # The webserver queues runs (QueuedRunCoordinator); the daemon starts them.
    processes = [subprocess.Popen(command, cwd=ROOT, env=dict(os.environ), stdout=subprocess.DEVNULL,
                                  stderr=subprocess.DEVNULL, start_new_session=True)
                 for command in ([sys.executable, "-m", "dagster_webserver", "-w", "workspace.yaml",
                                  "-h", "127.0.0.1", "-p", str(port)],
                                 [sys.executable, "-m", "dagster._daemon", "run", "-w", "workspace.yaml"])]
    url = f"http://127.0.0.1:{port}/graphql"
    deadline = time.time() + 90
    try:
        while time.time() < deadline:
            try:
                if httpx.post(url, json={"query": "{ version }"}, timeout=2).status_code == 200:
                    break
            except httpx.HTTPError:
                time.sleep(0.5)
        else:
            pytest.fail("dagster-webserver did not come up within 90 s")
        yield url
    finally:
        for process in processes:  # each with the processes it started (code server, runs)
            os.killpg(process.pid, signal.SIGTERM)
        for process in processes:
            try:
                process.wait(15)
            except subprocess.TimeoutExpired:
                os.killpg(process.pid, signal.SIGKILL)


@pytest.mark.long
def test_a_partition_launched_through_graphql_materializes_with_its_tags(ui):
    webserver = ui.url
    tags = [{"key": "dagster/partition", "value": "2026-11-09|qwen"},
            {"key": "dagster/partition/date", "value": "2026-11-09"},
            {"key": "dagster/partition/platform", "value": "qwen"}]
    params = {
        "selector": {"repositoryLocationName": "visibility_assets.definitions", "repositoryName": "__repository__",
                     "jobName": "nightly_platform_job",
                     "assetSelection": [{"path": ["raw_ai_responses"]}, {"path": ["cleaned_samples"]}]},
        "runConfigData": {},  # the code location's executor is in-process already
        "executionMetadata": {"tags": tags},
    }
    launched = httpx.post(webserver, json={"query": LAUNCH, "variables": {"params": params}}, timeout=60).json()
    result = launched["data"]["launchRun"]
    assert result["__typename"] == "LaunchRunSuccess", result
    run_id = result["run"]["runId"]
    deadline, run = time.time() + 180, None
    while time.time() < deadline:
        run = httpx.post(webserver, json={"query": RUN, "variables": {"runId": run_id}}, timeout=10).json()
        run = run["data"]["runOrError"]
        if run["status"] in ("SUCCESS", "FAILURE", "CANCELED"):
            break
        time.sleep(1)
    assert run["status"] == "SUCCESS", run
    assert {t["key"]: t["value"] for t in run["tags"]}["dagster/partition/platform"] == "qwen"
    materialized = {(tuple(m["assetKey"]["path"]), m["partition"]) for m in run["assetMaterializations"]}
    assert {(("raw_ai_responses",), "2026-11-09|qwen"), (("cleaned_samples",), "2026-11-09|qwen")} <= materialized


TIMES = """
query Run($runId: ID!) { runOrError(runId: $runId) { ... on Run { status startTime endTime } } }"""


def _launch(url: str, day: str, platform: str, run_config: dict | None = None) -> str:
    tags = [{"key": "dagster/partition", "value": f"{day}|{platform}"},
            {"key": "dagster/partition/date", "value": day},
            {"key": "dagster/partition/platform", "value": platform}]
    params = {"selector": {"repositoryLocationName": "visibility_assets.definitions",
                           "repositoryName": "__repository__", "jobName": "nightly_platform_job",
                           "assetSelection": [{"path": ["raw_ai_responses"]}]},
              "runConfigData": run_config or {}, "executionMetadata": {"tags": tags}}
    result = httpx.post(url, json={"query": LAUNCH, "variables": {"params": params}}, timeout=60).json()
    return result["data"]["launchRun"]["run"]["runId"]


# What a user types into the launchpad for an ad-hoc request: two questions, three rounds.
ASK = {"ops": {"raw_ai_responses": {"config": {"ask": {"questions": ["q001", "q002"], "rounds": 3}}}}}


@pytest.mark.long
def test_the_run_queue_serializes_a_platform_and_runs_platforms_side_by_side(ui):
    """qwen-2 is an ad-hoc request from the launchpad for qwen-1's day: it waits its turn too."""
    webserver = ui.url
    runs = {name: _launch(webserver, day, platform, config)
            for name, (day, platform, config) in {"qwen-1": ("2026-11-11", "qwen", None),
                                                  "qwen-2": ("2026-11-11", "qwen", ASK),
                                                  "kimi-1": ("2026-11-11", "kimi", None)}.items()}
    deadline, times = time.time() + 240, {}
    while time.time() < deadline and len(times) < len(runs):
        for name, run_id in runs.items():
            run = httpx.post(webserver, json={"query": TIMES, "variables": {"runId": run_id}}, timeout=10).json()
            run = run["data"]["runOrError"]
            if run["status"] in ("SUCCESS", "FAILURE", "CANCELED"):
                assert run["status"] == "SUCCESS", (name, run)
                times[name] = (run["startTime"], run["endTime"])
        time.sleep(1)
    assert len(times) == 3, times
    (q1_start, q1_end), (q2_start, q2_end), (k_start, k_end) = times["qwen-1"], times["qwen-2"], times["kimi-1"]
    assert q2_start >= q1_end or q1_start >= q2_end  # one qwen run at a time
    assert k_start < max(q1_end, q2_end) and min(q1_start, q2_start) < k_end  # kimi beside a qwen run
    with reading(lake_settings()) as conn:
        keys = conn.execute("SELECT task_id IS NULL, count(DISTINCT request_key), count(*), min(round), max(round)"
                            " FROM raw_ai_responses WHERE platform = 'qwen' AND date = DATE '2026-11-11'"
                            " GROUP BY ALL ORDER BY 1").fetchall()
    assert keys == [(False, 6, 6, 3, 5), (True, 24, 24, 1, 2)]  # the ad-hoc rounds after the nightly ones


STATUS = """
query Run($runId: ID!) { runOrError(runId: $runId) { ... on Run { status startTime endTime } } }"""


def _run_status(url: str, run_id: str) -> dict:
    return httpx.post(url, json={"query": STATUS, "variables": {"runId": run_id}}, timeout=10).json()[
        "data"]["runOrError"]


def _wait(condition, timeout_s: float, what: str):
    deadline = time.time() + timeout_s
    while time.time() < deadline:
        value = condition()
        if value:
            return value
        time.sleep(0.2)
    pytest.fail(f"{what}: not within {timeout_s:.0f} s")


@pytest.mark.long
def test_a_killed_run_worker_fails_its_run_frees_its_platform_and_is_retried(ui):
    """SIGKILL of a run worker the daemon launched: run monitoring marks the run failed, the
    platform's next queued run starts within 2 minutes, and the run retry finishes the partition
    without re-sending an answer the killed worker had stored."""
    from dagster import DagsterEventType
    from dagster._core.storage.dagster_run import RunsFilter

    webserver, simulator = ui.url, ui.simulator
    killed_day, next_day = "2026-11-12", "2026-11-13"

    def stats() -> dict:
        return simulator.app.stats_json().get("qwen", {})

    answered_before = stats().get("answered", 0)  # by the module's other tests
    killed = _launch(webserver, killed_day, "qwen")
    waiting = _launch(webserver, next_day, "qwen")  # queued behind it: one run per platform
    _wait(lambda: stats().get("answered", 0) >= answered_before + 6, 120, "the first run collecting")
    with DagsterInstance.get() as instance:
        start = instance.get_records_for_run(killed, of_type=DagsterEventType.RUN_START, limit=1).records
        os.kill(start[0].event_log_entry.dagster_event.pid, signal.SIGKILL)
        killed_at = time.time()
        sent_before = stats()["received_by_key"]

        _wait(lambda: _run_status(webserver, killed)["status"] == "FAILURE", 120, "the dead run marked failed")
        started = _wait(lambda: _run_status(webserver, waiting)["startTime"], 120, "the next qwen run starting")
        assert started - killed_at < 120
        retry = _wait(lambda: instance.get_runs(RunsFilter(tags={"dagster/parent_run_id": killed})), 180,
                      "a retry of the dead run")[0]
        _wait(lambda: _run_status(webserver, retry.run_id)["status"] in ("SUCCESS", "FAILURE"), 240, "the retry")
    assert _run_status(webserver, retry.run_id)["status"] == "SUCCESS"
    assert _run_status(webserver, waiting)["status"] == "SUCCESS"
    # What the killed worker had received (its checkpoints, and the log of answers as they came)
    # is kept under its run's id, and none of it was asked again.
    with reading(lake_settings()) as conn:
        kept = {k for (k,) in conn.execute("SELECT request_key FROM journal_answers WHERE platform = 'qwen'"
                                            " AND date = ? AND run_id = ?", [killed_day, killed]).fetchall()}
    assert kept and all(stats()["received_by_key"][key] == sent_before[key] for key in kept)
    with reading(lake_settings()) as conn:
        assert conn.execute("SELECT count(*), count(DISTINCT request_key) FROM raw_ai_responses"
                            " WHERE platform = 'qwen' AND date = ?", [killed_day]).fetchone() == (24, 24)
