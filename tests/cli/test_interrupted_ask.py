"""An interrupted `visibility ask` never blocks the next one: a run whose command is killed
(SIGKILL) is found dead and marked failed by the next command, one told to stop (SIGINT,
SIGTERM) stores what it has and fails at once; either way its task goes back to the queue with
the attempt counted, and the same `visibility ask` resumes it without sending a saved answer again."""

import os
import signal
import subprocess
import sys
import time
from datetime import UTC, datetime

import httpx
import pytest
from dagster import DagsterRunStatus

from tests.conftest import write_config
from tests.pipeline import read_warehouse
from visibility_assets.config import EXAMPLE_CONFIG_DIR, load_config
from visibility_assets.operate.instance import get_instance
from visibility_assets.tools.simulator.behaviour import PlatformBehaviour, SimulatorSettings
from visibility_assets.tools.simulator.server import SimulatorServer

pytestmark = pytest.mark.system
DAY = "2026-11-07"
ASK = ("ask", "--platform", "qwen", "--category", "cloud", "--rounds", "4", "--date", DAY)


@pytest.fixture
def slow_simulator():
    """Answers that take a while, so that a command can be stopped in the middle of its run."""
    with SimulatorServer(SimulatorSettings(seed=1, default=PlatformBehaviour(latency_s=(0.3, 0.6))),
                         load_config(EXAMPLE_CONFIG_DIR)) as server:
        yield server


def _start() -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "visibility_assets.cli", *ASK], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env=dict(os.environ))


def _stats(simulator) -> dict:
    return httpx.get(f"{simulator.url}/_stats").json().get("qwen", {})


def _rows(sql: str, params: dict | None = None) -> list:
    with read_warehouse() as conn:
        return conn.execute(sql, params or {}).fetchall()


def _stop_midway(simulator, signum: int) -> tuple[str, str]:
    ask = _start()
    deadline = time.monotonic() + 120
    while _stats(simulator).get("answered", 0) < 6:  # in the middle of its run: answers stored, more to send
        assert ask.poll() is None and time.monotonic() < deadline, ask.communicate()
        time.sleep(0.1)
    ask.send_signal(signum)
    out, err = ask.communicate(timeout=60)
    assert ask.returncode == (-signum if signum == signal.SIGKILL else 128 + signum), out + err
    return out, err


@pytest.mark.parametrize("signum", [signal.SIGKILL, signal.SIGINT, signal.SIGTERM])
@pytest.mark.long
def test_a_stopped_ask_is_resumed_by_the_next_without_sending_a_saved_answer_again(
        tmp_path, monkeypatch, visibility_home, slow_simulator, signum):
    config = write_config(tmp_path / "config", slow_simulator.port, rate_limit_rps=5, max_concurrency=2)
    monkeypatch.setenv("VISIBILITY_CONFIG_DIR", str(config))
    out, err = _stop_midway(slow_simulator, signum)
    instance = get_instance()
    (first,) = instance.get_runs()
    [(task_id, state, retries)] = _rows("SELECT task_id, state, retries FROM collection_tasks")
    if signum == signal.SIGKILL:  # nothing could be said: the run still looks alive
        assert first.status == DagsterRunStatus.STARTED and (state, retries) == ("requested", 0)
    else:  # told to stop: it stored what it had and ended its run as failed, at once
        assert f"interrupted by {signal.Signals(signum).name}" in out and "back in the queue" in out, out + err
        assert first.status == DagsterRunStatus.FAILURE and (state, retries) == ("planned", 1)
        assert "Traceback" not in out + err
        # Not the platform's fault: the machine's (or its operator's), said on the run and its row.
        assert first.tags["visibility/fault_class"] == "downstream"
        assert _rows("SELECT fault_class FROM collection_runs") == [("downstream",)]

    started = datetime.now(UTC)
    again = _start()
    out, err = again.communicate(timeout=240)
    assert again.returncode == 0, out + err
    assert "resumed" in out and task_id in out, out
    second = next(r for r in instance.get_runs() if r.run_id != first.run_id)
    assert (instance.get_run_record_by_id(second.run_id).create_timestamp - started).total_seconds() < 30
    assert instance.get_run_by_id(first.run_id).status == DagsterRunStatus.FAILURE
    [(state, retries)] = _rows("SELECT state, retries FROM collection_tasks")
    assert (state, retries) == ("done", 1)  # one task, finished, its interrupted attempt counted
    answers = _rows("SELECT request_key, count(*) FROM raw_ai_responses WHERE task_id = $task GROUP BY 1",
                    {"task": task_id})
    assert len(answers) == 9 * 4 and all(n == 1 for _, n in answers)  # cloud's 9 questions x 4 rounds
    received = _stats(slow_simulator)["received_by_key"]
    # What the stopped run received it kept: told to stop, in the journal at once; killed, in its
    # in-flight log, which the resumed run stores under the stopped run's id before sending.
    saved = {key for (key,) in _rows("SELECT request_key FROM journal_answers WHERE run_id = $run",
                                     {"run": first.run_id})}
    assert len(saved) >= 6 - 2  # answered before the stop, but for two in flight (max_concurrency)
    # A saved answer is never asked for again (one cut off in flight is: its answer was never stored).
    assert all(received[key] == 1 for key in saved), {k: received[k] for k in saved}
