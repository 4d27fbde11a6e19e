"""Crash, outage and secrets, through real Dagster runs against the simulated platforms: in
process, or on loopback where a worker process collects and is killed."""

import os
import signal
import subprocess
import sys
import time

import pytest
from dagster import Backoff, DagsterEventType, RetryPolicy, materialize

from tests.pipeline import raw_asset, read_warehouse, resources
from visibility_assets.collect.in_flight import InFlightLog
from visibility_assets.collect.plan import plan_requests
from visibility_assets.collect.resource import CollectorResource
from visibility_assets.config import load_config
from visibility_assets.core.partitions import partition_key, partition_tags
from visibility_assets.operate.instance import get_instance
from visibility_assets.tools.simulator.behaviour import PlatformBehaviour, SimulatorSettings
from visibility_assets.tools.simulator.server import SimulatorServer
from visibility_assets.tools.simulator.transport import IN_PROCESS_URL

from tests.conftest import in_process, write_config

DAY = "2026-11-05"


def _stats(simulator, platform):
    return simulator.app.stats_json().get(platform, {})


def _kill_midway(server, platform: str, answered: int) -> None:
    """A worker process collects the platform's partition and is SIGKILLed once the simulator
    has answered `answered` requests."""
    get_instance()
    worker = subprocess.Popen([sys.executable, "-m", "visibility_assets.run_worker", DAY, platform],
                              stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                              env=dict(os.environ))
    worker.stdin.close()
    deadline = time.time() + 60
    while _stats(server, platform).get("answered", 0) < answered and time.time() < deadline:
        time.sleep(0.02)
    worker.send_signal(signal.SIGKILL)
    worker.wait()


@pytest.mark.system
def test_sigkill_midway_then_resume_never_resends_a_stored_answer(visibility_home, tmp_path, monkeypatch):
    settings = SimulatorSettings(seed=2, default=PlatformBehaviour(latency_s=(0.05, 0.15)))
    with SimulatorServer(settings, load_config()) as server:
        config_dir = write_config(tmp_path / "config", server.port, questions=20, rounds=3, rate_limit_rps=15)
        monkeypatch.setenv("VISIBILITY_CONFIG_DIR", str(config_dir))
        _kill_midway(server, "doubao", answered=25)
        received_before = _stats(server, "doubao")["received_by_key"]

        run = materialize([raw_asset()], partition_key=partition_key(DAY, "doubao"),
                          instance=get_instance(), resources=resources(), tags=partition_tags(DAY, "doubao"))
        assert run.success
        received_after = _stats(server, "doubao")["received_by_key"]

    # What the killed run received it had logged at once: the resumed run stores those answers
    # under the killed run's id, and asks none of them again.
    with read_warehouse() as conn:
        kept = {k for (k,) in conn.execute("SELECT request_key FROM journal_answers WHERE date = ? AND platform ="
                                           " 'doubao' AND run_id <> ?", [DAY, run.run_id]).fetchall()}
    assert 0 < len(kept) < 60, "the kill should land midway"
    assert all(received_after[key] == received_before[key] for key in kept)  # none re-sent
    with read_warehouse() as conn:
        total, distinct = conn.execute(
            "SELECT count(*), count(DISTINCT request_key) FROM raw_ai_responses WHERE platform = 'doubao'").fetchone()
        # The killed run never stored its request states: the resumed one does, answered ones
        # included, each request's attempts counted from the attempts journaled.
        states = conn.execute("SELECT state, count(*), min(attempts) FROM collection_requests"
                              " WHERE platform = 'doubao' GROUP BY state").fetchall()
    assert total == distinct == 60
    assert states == [("succeeded", 60, 1)]
    # The partition's figures are over both runs: the killed one paid for the answers it stored.
    (materialization,) = run.asset_materializations_for_node("raw_ai_responses")
    meta = {k: v.value for k, v in materialization.metadata.items()}
    with read_warehouse() as conn:
        cost, searches = conn.execute("SELECT sum(cost), sum(search_count) FROM raw_ai_responses"
                                      " WHERE platform = 'doubao'").fetchone()
    assert meta["partition_cost"] == pytest.approx(cost, abs=1e-6) and meta["cost"] < meta["partition_cost"]
    assert meta["partition_searches"] == searches == 60 > meta["searches"]


@pytest.mark.dagster
def test_breaker_fails_the_partition_and_the_retry_policy_resumes_it(visibility_home, tmp_path, monkeypatch):
    """The platform is down for its first 30 requests: run 1 trips the breaker, Dagster's retry finishes."""
    settings = SimulatorSettings(seed=2, default=PlatformBehaviour(latency_s=(0, 0.002), outage_requests=30))
    with in_process(settings) as server:
        config_dir = write_config(tmp_path / "config", IN_PROCESS_URL, questions=10, rounds=2)
        monkeypatch.setenv("VISIBILITY_CONFIG_DIR", str(config_dir))
        asset = raw_asset(RetryPolicy(max_retries=3, delay=0.2, backoff=Backoff.EXPONENTIAL))
        collector = CollectorResource(max_attempts=2, base_delay_s=0.01, breaker_consecutive_failures=3,
                                      failure_share_limit=0.0)
        result = materialize([asset], partition_key=partition_key(DAY, "ernie"), instance=get_instance(),
                             resources={**resources(), "collector": collector}, tags=partition_tags(DAY, "ernie"))
        stats = _stats(server, "ernie")
    events = [e.event_type for e in result.all_events]
    assert DagsterEventType.STEP_UP_FOR_RETRY in events
    failure = next(e for e in result.all_events if e.event_type == DagsterEventType.STEP_UP_FOR_RETRY)
    assert "circuit breaker open" in str(failure.event_specific_data.error)
    assert result.success
    assert stats["duplicates"] == 0 and stats["answered"] == 20, stats
    # The partition's figures count the failed step attempt too, not only the one that succeeded.
    (materialization,) = result.asset_materializations_for_node("raw_ai_responses")
    meta = {k: v.value for k, v in materialization.metadata.items()}
    assert meta["partition_attempts"] == stats["received"] > meta["http_attempts"]
    assert meta["partition_retries"] == stats["received"] - 20
    assert meta["partition_attempt_errors_by_class"] == {"overloaded": 30}


@pytest.mark.dagster
def test_no_api_key_appears_in_tables_journal_or_logs(visibility_home, tmp_path, monkeypatch):
    secret = "sk-test-5f8e2c19d4b7a6"
    monkeypatch.setenv("SIM_PLATFORM_KEY", secret)
    settings = SimulatorSettings(default=PlatformBehaviour(latency_s=(0, 0.002), api_key=secret,
                                                           server_error_rate=0.2))
    with in_process(settings):
        config_dir = write_config(tmp_path / "config", IN_PROCESS_URL, questions=6, rounds=2,
                                  api_key_env="SIM_PLATFORM_KEY")
        monkeypatch.setenv("VISIBILITY_CONFIG_DIR", str(config_dir))
        instance = get_instance()
        result = materialize([raw_asset()], partition_key=partition_key(DAY, "kimi"),
                             instance=instance, resources=resources(), tags=partition_tags(DAY, "kimi"))
    assert result.success
    logs = "\n".join(str(record) for record in instance.all_logs(result.run_id))
    assert secret not in logs
    with read_warehouse() as conn:
        for (table,) in conn.execute("SELECT table_name FROM information_schema.tables"
                                     " WHERE table_catalog = 'lake'").fetchall():
            dump = conn.execute(f'SELECT * FROM "{table}"').fetchall()  # noqa: S608 - test introspection
            assert secret not in repr(dump), table


@pytest.mark.dagster
def test_missing_key_fails_the_partition_naming_the_variable_without_retrying(visibility_home, tmp_path, monkeypatch):
    monkeypatch.delenv("SIM_ABSENT_KEY", raising=False)
    with in_process(SimulatorSettings()) as server:
        config_dir = write_config(tmp_path / "config", IN_PROCESS_URL, api_key_env="SIM_ABSENT_KEY")
        monkeypatch.setenv("VISIBILITY_CONFIG_DIR", str(config_dir))
        result = materialize([raw_asset(RetryPolicy(max_retries=2, delay=0.1))],
                             partition_key=partition_key(DAY, "qwen"), instance=get_instance(),
                             resources=resources(), raise_on_error=False)
        assert _stats(server, "qwen") == {}
    assert not result.success
    failure = result.get_step_failure_events()[0].event_specific_data.error.message
    assert "SIM_ABSENT_KEY" in failure
    assert DagsterEventType.STEP_UP_FOR_RETRY not in [e.event_type for e in result.all_events]


@pytest.mark.system
def test_after_sigkill_the_ledger_counts_every_request_the_platform_received(visibility_home, tmp_path, monkeypatch):
    """Attempts are written down before they are sent; the resumed run closes those the crash
    interrupted, so http_attempts has exactly one row per request the simulator received."""
    settings = SimulatorSettings(seed=4, default=PlatformBehaviour(latency_s=(0.2, 0.4)))
    with SimulatorServer(settings, load_config()) as server:
        config_dir = write_config(tmp_path / "config", server.port, questions=20, rounds=3, rate_limit_rps=30)
        monkeypatch.setenv("VISIBILITY_CONFIG_DIR", str(config_dir))
        _kill_midway(server, "ernie", answered=20)  # with requests in flight: 8 workers, 0.2-0.4 s each
        run = materialize([raw_asset()], partition_key=partition_key(DAY, "ernie"),
                          instance=get_instance(), resources=resources(), tags=partition_tags(DAY, "ernie"))
        assert run.success
        received = _stats(server, "ernie")["received"]
    with read_warehouse() as conn:
        ledger, interrupted = conn.execute(
            "SELECT count(*), count(*) FILTER (error_class = 'interrupted') FROM http_attempts"
            " WHERE platform = 'ernie' AND date = ?", [DAY]).fetchone()
    assert interrupted > 0, "the kill should land with requests in flight"
    assert ledger == received


def _start_workers(platforms: list[str]) -> list[subprocess.Popen]:
    get_instance()
    workers = [subprocess.Popen([sys.executable, "-m", "visibility_assets.run_worker", DAY, platform],
                                stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                env=dict(os.environ)) for platform in platforms]
    for worker in workers:
        worker.stdin.close()
    return workers


def _answered_keys(server, platform) -> set[str]:
    return {key for key, count in _stats(server, platform).get("answered_by_key", {}).items() if count}


def _received_by_worker(home, platform, answered: set[str], logs_seen: set[str]) -> bool:
    """The worker holds every answer the simulator sent it: each is in its in-flight log, or the
    log is gone because the journal stored them all (after it was seen: a log never seen is not
    taken for one cleared). An answer the simulator has sent but the worker has not read yet is
    still in flight (the kernel's buffers hold it), whatever the simulator's count."""
    (log,) = list(home.glob(f"**/in_flight/{DAY}/{platform}.log")) or [None]
    if log is None:
        return platform in logs_seen
    logs_seen.add(platform)
    logged = {entry["answer"][0] for entry in InFlightLog(log).answers()}
    return answered <= logged


@pytest.mark.system
@pytest.mark.parametrize("when", ["sending", "committing"])
@pytest.mark.long
def test_every_platform_killed_at_once_resends_only_what_was_in_flight(visibility_home, tmp_path, monkeypatch, when):
    """kill -9 of every platform's worker while all of them send (or once every answer has reached
    its worker and the workers are storing them): the resumed runs send again only requests the simulator had
    not answered a moment before the kill, no more than were in flight, and store each answer once."""
    settings = SimulatorSettings(seed=6, default=PlatformBehaviour(latency_s=(0.05, 0.15)))
    with SimulatorServer(settings, load_config()) as server:
        config_dir = write_config(tmp_path / "config", server.port, questions=20, rounds=3, rate_limit_rps=30)
        monkeypatch.setenv("VISIBILITY_CONFIG_DIR", str(config_dir))
        platforms = load_config().platform_names
        planned = len(plan_requests(load_config(), load_config().platform(platforms[0]), DAY))
        enough = 15 if when == "sending" else planned
        workers = _start_workers(platforms)
        answered_before, logs_seen, deadline = {}, set(), time.time() + 90
        while time.time() < deadline:
            answered_now = {p: _answered_keys(server, p) for p in platforms}
            # Every look notes whose in-flight log is there: one seen and then gone was stored whole.
            received = {p: _received_by_worker(visibility_home, p, answered_now[p], logs_seen) for p in platforms}
            if all(len(keys) >= enough for keys in answered_now.values()) and (
                    when == "sending" or all(received.values())):
                break
            answered_before = answered_now  # the last look before the one that triggers the kill
            time.sleep(0.2)
        assert [worker.poll() for worker in workers] == [None] * len(workers), "the kill should land mid-run"
        for worker in workers:
            worker.send_signal(signal.SIGKILL)
        for worker in workers:
            worker.wait()
        at_kill = {p: _stats(server, p) for p in platforms}
        for platform in platforms:
            run = materialize([raw_asset()], partition_key=partition_key(DAY, platform), instance=get_instance(),
                              resources=resources(), tags=partition_tags(DAY, platform))
            assert run.success
        after = {p: _stats(server, p) for p in platforms}

    for platform in platforms:
        before, now = at_kill[platform]["received_by_key"], after[platform]["received_by_key"]
        resent = {key for key, count in now.items() if key in before and count > before[key]}
        answered_at_kill = {key for key, count in at_kill[platform]["answered_by_key"].items() if count}
        in_flight = {key for key, count in before.items() if count > at_kill[platform]["answered_by_key"].get(key, 0)}
        # What the simulator answered as the kill landed (since the last look, 0.2 s before) may
        # not have reached the worker: it is in flight for the worker, and asked again.
        last_moment = answered_at_kill - answered_before.get(platform, set())
        assert not resent & answered_before.get(platform, set()), platform  # answered a moment before: kept
        assert len(resent) <= len(in_flight) + len(last_moment), (platform, resent, in_flight)
        assert after[platform]["duplicates"] <= len(last_moment)
        if when == "committing":
            assert not resent, platform  # every answer was in: nothing is asked again
    with read_warehouse() as conn:
        stored = conn.execute("SELECT platform, count(*), count(DISTINCT request_key) FROM raw_ai_responses"
                              " GROUP BY 1").fetchall()
    assert sorted(stored) == sorted((p, planned, planned) for p in platforms)
