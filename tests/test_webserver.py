"""The UI path for real: dagster-webserver on loopback, a partition launched through GraphQL."""

import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

from visibility_assets.instance import ensure_dagster_home

ROOT = Path(__file__).parents[1]
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


@pytest.fixture
def webserver(visibility_home, config_dir, simulator):
    ensure_dagster_home()
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


def test_a_partition_launched_through_graphql_materializes_with_its_tags(webserver):
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
