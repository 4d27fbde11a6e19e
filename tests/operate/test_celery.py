"""The Celery scale-out path for real: RabbitMQ as the broker, two Celery worker processes, the
Dagster instance in PostgreSQL, and one nightly partition run through the Celery executor
(visibility_assets/celery_location.py) with its steps spread over both workers.

Skipped with a message when RabbitMQ or PostgreSQL does not answer, unless CI=true (a failure).
"""

import datetime
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml
from dagster import DagsterEventType, DagsterInstance, DagsterRunStatus

from tests.pipeline import read_warehouse
from tests.services import dagster_pg_url, require_service, scratch_database
from visibility_assets.celery_location import CELERY_JOB_NAME
from visibility_assets.config import load_config
from visibility_assets.core.partitions import partition_tags
from visibility_assets.operate.instance import INSTANCE_YAML

pytestmark = pytest.mark.system

DAY, PLATFORM = "2026-11-01", "deepseek"
BROKER_HOST, BROKER_PORT = "127.0.0.1", 5672
BROKER = f"amqp://guest:guest@{BROKER_HOST}:{BROKER_PORT}//"
WORKERS = ("w1", "w2")
BIN = Path(sys.executable).parent  # the venv's dagster, dagster-celery and celery commands
READY_TIMEOUT_S, RUN_TIMEOUT_S = 60, 120


@pytest.fixture
def broker() -> str:
    require_service(BROKER_HOST, BROKER_PORT, "RabbitMQ")
    return BROKER


@pytest.fixture
def pg_url():
    with scratch_database("visibility_celery") as name:
        yield dagster_pg_url(name)


@pytest.fixture
def shared_instance(pg_url, visibility_home, loopback_config_dir, monkeypatch) -> Path:
    """DAGSTER_HOME with the production dagster.yaml (PostgreSQL storage): the launching
    process and the workers see the same runs and event log."""
    home = visibility_home / "dagster_home"
    home.mkdir(parents=True)
    shutil.copy(INSTANCE_YAML["postgres"], home / "dagster.yaml")
    monkeypatch.setenv("VISIBILITY_PG_URL", pg_url)
    monkeypatch.setenv("DAGSTER_HOME", str(home))
    monkeypatch.setenv("PATH", f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}")
    return home


@pytest.fixture
def celery_yaml(broker, tmp_path) -> Path:
    """The executor config block; workers (-y) and runs (-c) read the same file."""
    path = tmp_path / "celery.yaml"
    path.write_text(yaml.safe_dump({"execution": {"config": {"broker": broker, "backend": "rpc://"}}}))
    return path


@pytest.fixture
def celery_workers(celery_yaml, shared_instance, tmp_path):
    logs, workers = {}, {}
    try:
        for name in WORKERS:
            logs[name] = tmp_path / f"worker-{name}.log"
            with logs[name].open("wb") as log:
                workers[name] = subprocess.Popen(
                    [str(BIN / "dagster-celery"), "worker", "start", "-A", "dagster_celery.app",
                     "-y", str(celery_yaml), "-n", name, "--loglevel", "INFO",
                     "--", "--concurrency=1", "--without-gossip", "--without-mingle", "--without-heartbeat"],
                    stdout=log, stderr=subprocess.STDOUT, start_new_session=True)  # own process group
        _wait_until_ready(workers, logs, celery_yaml)
        yield logs
    finally:
        _stop(workers.values())


def _wait_until_ready(workers: dict, logs: dict, celery_yaml: Path) -> None:
    """Until every worker answers a ping over the broker (as `celery inspect ping` does)."""
    from dagster_celery.cli import get_app

    app = get_app(str(celery_yaml))
    answered: set[str] = set()
    deadline = time.monotonic() + READY_TIMEOUT_S
    try:
        while time.monotonic() < deadline:
            for name, process in workers.items():
                if process.poll() is not None:
                    pytest.fail(f"worker {name} exited {process.returncode}:\n{logs[name].read_text()[-3000:]}")
            answered = {host.split("@")[0] for reply in app.control.ping(timeout=1.0) for host in reply}
            if answered >= set(workers):
                return
        pytest.fail(f"workers not ready in {READY_TIMEOUT_S} s; answered: {answered}\n"
                    + "\n".join(logs[n].read_text()[-2000:] for n in workers))
    finally:
        app.close()


def _stop(processes) -> None:
    """Warm shutdown of each worker's whole process group (dagster-celery, celery, pool child),
    all at once; what is left after the grace period is killed."""
    groups = {process.pid: process for process in processes}
    for sig, grace in ((signal.SIGTERM, 20), (signal.SIGKILL, 5)):
        for group in groups:
            try:
                os.killpg(group, sig)
            except ProcessLookupError:
                pass
        deadline = time.monotonic() + grace
        while groups and time.monotonic() < deadline:
            for group, process in list(groups.items()):
                process.poll()  # reap the group leader, which exits first
                try:
                    os.killpg(group, 0)
                except ProcessLookupError:
                    del groups[group]
            time.sleep(0.2)
        if not groups:
            return


def _celery_worker_by_step(instance: DagsterInstance, run_id: str) -> dict[str, str]:
    """Step key -> the Celery worker that ran it, from the engine event each task records."""
    workers = {}
    for record in instance.all_logs(run_id, of_type=DagsterEventType.ENGINE_EVENT):
        event = record.dagster_event
        metadata = event.engine_event_data.metadata if event.engine_event_data else {}
        if "Celery worker" in metadata:
            workers[event.step_key] = metadata["Celery worker"].value
    return workers


@pytest.mark.long
def test_nightly_partition_runs_on_two_celery_workers(celery_workers, celery_yaml, shared_instance, simulator):
    started = time.monotonic()
    launched = subprocess.run(
        [str(BIN / "dagster"), "job", "execute", "-m", "visibility_assets.celery_location", "-a", "defs",
         "-j", CELERY_JOB_NAME, "-c", str(celery_yaml), "--tags", json.dumps(partition_tags(DAY, PLATFORM))],
        check=False, capture_output=True, text=True, timeout=RUN_TIMEOUT_S)  # status asserted below
    run_seconds = time.monotonic() - started

    instance = DagsterInstance.get()
    try:
        runs = instance.get_runs()
        assert len(runs) == 1, launched.stdout[-3000:] + launched.stderr[-3000:]
        run = runs[0]
        assert run.job_name == CELERY_JOB_NAME and run.tags["dagster/partition"] == f"{DAY}|{PLATFORM}"
        assert run.status == DagsterRunStatus.SUCCESS, launched.stdout[-3000:] + launched.stderr[-3000:]
        assert launched.returncode == 0

        # Every step ran in a Celery task (the engine event each task records names its worker),
        # the tasks were spread over both workers, and each worker's own log shows its steps.
        by_step = _celery_worker_by_step(instance, run.run_id)
        succeeded = {r.dagster_event.step_key
                     for r in instance.all_logs(run.run_id, of_type=DagsterEventType.STEP_SUCCESS)}
        assert succeeded and set(by_step) == succeeded, (by_step, succeeded)
        assert {host.split("@")[0] for host in by_step.values()} == set(WORKERS), by_step
        worker_logs = {name: log.read_text() for name, log in celery_workers.items()}
        for step, host in by_step.items():
            assert f" - {step} - STEP_SUCCESS - " in worker_logs[host.split("@")[0]], (step, host)
    finally:
        instance.dispose()

    config = load_config()
    expected = len(config.questions) * config.platform(PLATFORM).rounds
    with read_warehouse() as conn:
        rows = conn.execute("SELECT count(*), count(DISTINCT request_key), min(run_id), max(run_id)"
                            " FROM raw_ai_responses WHERE date = ? AND platform = ?",
                            [datetime.date.fromisoformat(DAY), PLATFORM]).fetchone()
    assert rows == (expected, expected, run.run_id, run.run_id)
    print(f"celery run: {run_seconds:.1f} s; steps by worker: {json.dumps(by_step, sort_keys=True)}")
