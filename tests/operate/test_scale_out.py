"""Scale-out for real: two "machines" (run workers with separate working folders) that share only
a PostgreSQL server (Dagster's instance and the DuckLake catalog) and an S3-compatible store
(the lake's data, moto on loopback). They collect different platforms at once; then one is
killed with SIGKILL mid-collection and the other resumes that partition."""

import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

from visibility_assets.config import load_config
from visibility_assets.operate.instance import INSTANCE_YAML
from visibility_assets.tools.simulator.behaviour import PlatformBehaviour, SimulatorSettings
from visibility_assets.tools.simulator.server import SimulatorServer
from visibility_assets.warehouse.lake import lake_settings, reading

from tests.conftest import write_config
from tests.services import scratch_database

pytestmark = pytest.mark.system

DAY = "2026-11-07"
BUCKET = "visibility"
S3_KEYS = {"AWS_ACCESS_KEY_ID": "scale-out-test", "AWS_SECRET_ACCESS_KEY": "scale-out-secret"}


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture
def database():
    """A PostgreSQL database of its own: Dagster's storage and the lake's catalog."""
    with scratch_database("visibility_scale_out") as name:
        yield name


@pytest.fixture
def object_store(tmp_path):
    """moto's S3-compatible server on loopback, with the lake's bucket."""
    import boto3

    port = _free_port()
    server = subprocess.Popen([sys.executable, "-m", "moto.server", "-H", "127.0.0.1", "-p", str(port)],
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    endpoint = f"http://127.0.0.1:{port}"
    try:
        deadline = time.time() + 30
        while True:
            try:
                httpx.get(endpoint, timeout=1)
                break
            except httpx.HTTPError:
                if time.time() > deadline:
                    raise
                time.sleep(0.2)
        s3 = boto3.client("s3", endpoint_url=endpoint, region_name="us-east-1", **{
            "aws_access_key_id": S3_KEYS["AWS_ACCESS_KEY_ID"],
            "aws_secret_access_key": S3_KEYS["AWS_SECRET_ACCESS_KEY"]})
        s3.create_bucket(Bucket=BUCKET)
        yield endpoint, s3
    finally:
        os.killpg(server.pid, signal.SIGKILL)
        server.wait()


def _machine(root: Path, name: str, port: int, shared: dict) -> dict:
    """A machine's environment: its own data directory, Dagster home and config copy."""
    folder = root / name
    dagster_home = folder / "dagster_home"
    dagster_home.mkdir(parents=True)
    shutil.copy(INSTANCE_YAML["postgres"], dagster_home / "dagster.yaml")
    # 60 requests at 6 a second outlast the collector's first checkpoint (every 5 s).
    config = write_config(folder / "config", port, questions=20, rounds=3, rate_limit_rps=6)
    env = {key: value for key, value in os.environ.items() if not key.startswith(("VISIBILITY_", "DAGSTER_"))}
    return {**env, **shared, "VISIBILITY_HOME": str(folder / "home"), "DAGSTER_HOME": str(dagster_home),
            "VISIBILITY_CONFIG_DIR": str(config)}


def _run_worker(env: dict, platform: str) -> subprocess.Popen:
    """A run of the partition's raw answers on the machine (tests/workers/raw_collector.py)."""
    return subprocess.Popen([sys.executable, "-m", "tests.workers.raw_collector", DAY, platform],
                            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env=env, cwd=Path(__file__).parents[2])


def _stats(server, platform):
    return httpx.get(f"{server.url}/_stats").json().get(platform, {})


def _journaled(day: str, platform: str) -> set[str]:
    with reading(lake_settings()) as conn:
        return {k for (k,) in conn.execute("SELECT request_key FROM journal_answers WHERE date = ? AND platform = ?",
                                           [day, platform]).fetchall()}


@pytest.mark.long
def test_two_machines_collect_at_once_and_one_resumes_what_the_other_was_killed_in(
        tmp_path, database, object_store, monkeypatch):
    endpoint, s3 = object_store
    shared = {"VISIBILITY_WAREHOUSE": f"postgres:dbname={database} host=127.0.0.1 user=postgres",
              "VISIBILITY_WAREHOUSE_DATA": f"s3://{BUCKET}/lake/", "VISIBILITY_S3_ENDPOINT": endpoint,
              "VISIBILITY_S3_REGION": "us-east-1", **S3_KEYS,
              "VISIBILITY_PG_URL": f"postgresql+psycopg2://postgres@127.0.0.1:5432/{database}"}
    behaviour = SimulatorSettings(seed=3, default=PlatformBehaviour(latency_s=(0.05, 0.15)))
    with SimulatorServer(behaviour, load_config()) as server:
        machine_a = _machine(tmp_path, "machine-a", server.port, shared)
        machine_b = _machine(tmp_path, "machine-b", server.port, shared)

        # The Dagster storage is set up once, as an operator does (`dagster instance migrate`): two
        # machines creating its tables in a new database at the same moment race each other.
        subprocess.run([sys.executable, "-m", "dagster", "instance", "migrate"], env=machine_a, check=True,
                       capture_output=True, timeout=120)
        # Different platforms at once, one on each machine.
        workers = [_run_worker(machine_a, "deepseek"), _run_worker(machine_b, "qwen")]
        outputs = [worker.communicate(timeout=240) for worker in workers]
        assert all(w.returncode == 0 and '"success": true' in out for w, (out, _) in zip(workers, outputs)), [
            (w.returncode, out[-1000:], err[-4000:]) for w, (out, err) in zip(workers, outputs)]

        # Machine A is killed mid-collection, after a checkpoint put answers in the shared journal
        # (its in-flight log, on its own disk, is not machine B's to read); machine B resumes.
        for key, value in shared.items():
            monkeypatch.setenv(key, value)
        killed = _run_worker(machine_a, "kimi")
        deadline = time.time() + 120
        while not (stored := _journaled(DAY, "kimi")) and time.time() < deadline:
            time.sleep(0.2)
        killed.send_signal(signal.SIGKILL)
        killed.wait()
        received_before = _stats(server, "kimi")["received_by_key"]
        assert 0 < len(stored) < 60, "the kill should land midway"

        out, err = _run_worker(machine_b, "kimi").communicate(timeout=240)
        assert '"success": true' in out, err[-3000:]
        received_after = _stats(server, "kimi")["received_by_key"]

    resent = [key for key in stored if received_after[key] != received_before[key]]
    assert resent == []  # 0 succeeded requests sent again
    with reading(lake_settings()) as conn:
        rows = conn.execute("SELECT platform, count(*), count(DISTINCT request_key) FROM raw_ai_responses"
                            " GROUP BY 1 ORDER BY 1").fetchall()
    assert rows == [("deepseek", 60, 60), ("kimi", 60, 60), ("qwen", 60, 60)]  # one row per request key
    # The lake's data is on the object store, nothing on either machine's disk.
    assert s3.list_objects_v2(Bucket=BUCKET, Prefix="lake/")["KeyCount"] > 0
    for machine in ("machine-a", "machine-b"):
        assert not (tmp_path / machine / "home" / "warehouse").exists()
