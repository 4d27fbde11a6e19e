"""The resilient collector against the real simulator: retries, 429s, deadline, breaker, resume."""

import time
from datetime import UTC, datetime

import httpx
import pytest

from visibility_assets.collect.client import RetrySettings
from visibility_assets.collect.collector import CollectionSettings, collect_partition
from visibility_assets.collect.report import CollectionFailed
from visibility_assets.collect.errors import ErrorClass, classify_status, parse_retry_after
from visibility_assets.collect.journal import CollectionJournal
from visibility_assets.config import MissingApiKey, load_config
from visibility_assets.tools.simulator.behaviour import PlatformBehaviour, SimulatorSettings
from visibility_assets.tools.simulator.server import SimulatorServer

from .conftest import write_config

pytestmark = pytest.mark.slow  # servers, processes or Dagster runs: the CI tier

DAY = "2026-11-02"
QUICK = CollectionSettings(retry=RetrySettings(max_attempts=4, base_delay_s=0.01, max_delay_s=0.05),
                           checkpoint_interval_s=0.05, timeout_s=1.0)


@pytest.mark.parametrize(("status", "body", "expected", "transient"), [
    (429, "", ErrorClass.RATE_LIMITED, True),
    (408, "", ErrorClass.REQUEST_TIMEOUT, True),
    (500, "", ErrorClass.SERVER_ERROR, True),
    (502, "", ErrorClass.SERVER_ERROR, True),
    (503, "", ErrorClass.OVERLOADED, True),
    (400, '{"error": {"message": "bad"}}', ErrorClass.BAD_REQUEST, False),
    (422, "", ErrorClass.BAD_REQUEST, False),
    (401, "", ErrorClass.AUTH, False),
    (403, "", ErrorClass.AUTH, False),
    (404, "", ErrorClass.NOT_FOUND, False),
    (400, '{"error": {"code": "data_inspection_failed"}}', ErrorClass.MODERATED, False),
    (451, "", ErrorClass.MODERATED, False),
    (402, "", ErrorClass.BILLING, False),
    (409, "", ErrorClass.CLIENT_ERROR, False),
])
def test_every_status_class_is_classified(status, body, expected, transient):
    assert classify_status(status, body) is expected
    assert expected.transient is transient


def test_success_is_not_an_error():
    assert classify_status(200) is None


def test_retry_after_in_seconds_date_and_milliseconds():
    now = time.time()
    assert parse_retry_after(httpx.Headers({"retry-after": "3"}), now) == 3.0
    date = datetime.fromtimestamp(now + 10, UTC).strftime("%a, %d %b %Y %H:%M:%S GMT")
    assert 8.5 <= parse_retry_after(httpx.Headers({"retry-after": date}), now) <= 10.0
    assert parse_retry_after(httpx.Headers({"retry-after-ms": "250", "retry-after": "3"}), now) == 0.25
    assert parse_retry_after(httpx.Headers({"retry-after": "soon"}), now) is None
    assert parse_retry_after(httpx.Headers({}), now) is None


def _collect(tmp_path, behaviour: PlatformBehaviour, settings=QUICK, platform="deepseek", journal_name="j",
             server=None, **config_overrides):
    owns_server = server is None
    server = server or SimulatorServer(SimulatorSettings(seed=5, default=behaviour)).start_in_thread()
    try:
        config = load_config(write_config(tmp_path / "config", server.port, **config_overrides))
        with CollectionJournal(tmp_path / f"{journal_name}.duckdb") as journal:
            try:
                report = collect_partition(config, config.platform(platform), DAY, "run-1", journal, settings)
            except CollectionFailed as exc:
                report = exc.report
                report.error = str(exc)
            ledger = journal.conn.execute(
                "SELECT request_key, attempt, http_status, error_class, started_at, finished_at"
                " FROM attempts ORDER BY request_key, attempt").fetchall()
            states = journal.state_counts()
        stats = httpx.get(f"{server.url}/_stats").json().get(platform, {})
    finally:
        if owns_server:
            server.stop()
    return report, ledger, states, stats


def test_transient_faults_are_retried_until_every_request_succeeds(tmp_path):
    behaviour = PlatformBehaviour(latency_s=(0, 0.005), hang_s=3).with_transient_faults(0.4)
    report, ledger, states, stats = _collect(tmp_path, behaviour, questions=10)
    assert report.succeeded == report.planned == 20 and report.failed == 0
    assert states == {"succeeded": 20}
    assert len(ledger) == report.attempts > 20  # every attempt is a ledger row
    assert {row[3] for row in ledger} - {None} <= {"server_error", "overloaded", "timeout", "connection", "malformed"}
    assert stats["duplicates"] == 0


def test_permanent_errors_are_not_retried(tmp_path):
    behaviour = PlatformBehaviour(latency_s=(0, 0.001), api_key="expected-key")
    settings = CollectionSettings(retry=QUICK.retry, failure_share_limit=1.0, breaker_consecutive_failures=1000)
    report, ledger, states, stats = _collect(tmp_path, behaviour, settings, questions=5, rounds=1)
    assert report.failed == 5 and report.failed_by_class == {"auth": 5}
    assert len(ledger) == 5 and {row[2] for row in ledger} == {401}  # one attempt each
    assert states == {"failed": 5}


def test_a_partition_fails_above_the_failure_share_limit_naming_platform_day_and_classes(tmp_path):
    behaviour = PlatformBehaviour(latency_s=(0, 0.001), api_key="expected-key")
    settings = CollectionSettings(retry=QUICK.retry, failure_share_limit=0.5, breaker_consecutive_failures=1000)
    report, _, states, _ = _collect(tmp_path, behaviour, settings, questions=5, rounds=1)
    assert report.error == f"deepseek {DAY}: 5 of 5 requests failed (100% > limit 50%); by class: {{'auth': 5}}"
    assert states == {"failed": 5}


def test_429_is_honoured_and_the_rate_lowered(tmp_path):
    """The config claims 50 rps but the platform permits 5: the client backs off instead of hammering."""
    behaviour = PlatformBehaviour(latency_s=(0, 0.001), rate_limit_rps=5)
    settings = CollectionSettings(retry=RetrySettings(max_attempts=10, base_delay_s=0.01), checkpoint_interval_s=0.05)
    report, ledger, states, stats = _collect(tmp_path, behaviour, settings, questions=10, rounds=3,
                                             rate_limit_rps=50)
    assert report.succeeded == 30
    assert 0 < report.http_429 < 30
    by_key: dict[str, list] = {}
    for key, attempt, status, _, started, finished in ledger:
        by_key.setdefault(key, []).append((status, started, finished))
    for attempts in by_key.values():
        for (status, _, finished), (_, next_started, _) in zip(attempts, attempts[1:]):
            if status == 429:  # Retry-After: 1 (retry-after-ms is the precise wait)
                assert (next_started - finished).total_seconds() >= 0.0


def test_deadline_defers_the_rest_and_the_next_run_collects_it(tmp_path):
    behaviour = PlatformBehaviour(latency_s=(0, 0.001))
    with SimulatorServer(SimulatorSettings(seed=5, default=behaviour)) as server:
        cut_short = CollectionSettings(retry=QUICK.retry, deadline=time.time() + 1.5, checkpoint_interval_s=0.05)
        first, _, states, _ = _collect(tmp_path, behaviour, cut_short, server=server, questions=12,
                                       rounds=2, rate_limit_rps=5, max_concurrency=1)
        assert first.deferred > 0 and states["deferred"] == first.deferred
        assert states["succeeded"] == first.succeeded
        second, _, states, stats = _collect(tmp_path, behaviour, QUICK, server=server, questions=12,
                                            rounds=2, rate_limit_rps=200)
    assert second.skipped_done == first.succeeded
    assert states == {"succeeded": 24}
    assert stats["duplicates"] == 0 and stats["received"] == 24


def test_priority_order_sends_high_priority_questions_first(tmp_path):
    config = load_config(write_config(tmp_path / "config", 1, questions=None))
    from visibility_assets.collect.plan import plan_requests
    priorities = [r.priority for r in plan_requests(config, config.platform("qwen"), DAY)]
    assert priorities == sorted(priorities, reverse=True)


def test_breaker_stops_a_platform_that_is_down(tmp_path):
    behaviour = PlatformBehaviour(latency_s=(0, 0.001), server_error_rate=1.0)
    report, ledger, states, stats = _collect(tmp_path, behaviour, questions=40, rounds=3)
    assert report.stopped and "circuit breaker open" in report.error
    assert stats["received"] < 120 * QUICK.retry.max_attempts / 2  # it stopped sending
    assert states.get("pending", 0) > 0  # unsent work is kept for the next run


def test_missing_api_key_fails_before_any_request(tmp_path, monkeypatch):
    monkeypatch.delenv("SIM_KEY_FOR_TEST", raising=False)
    with SimulatorServer(SimulatorSettings()) as server:
        config = load_config(write_config(tmp_path / "config", server.port, api_key_env="SIM_KEY_FOR_TEST"))
        with CollectionJournal(tmp_path / "j.duckdb") as journal, pytest.raises(MissingApiKey, match="SIM_KEY_FOR_TEST"):
            collect_partition(config, config.platform("kimi"), DAY, "run-1", journal, QUICK)
        assert httpx.get(f"{server.url}/_stats").json() == {}


def test_deadline_as_clock_time_is_the_next_such_time_in_shanghai():
    from zoneinfo import ZoneInfo

    from visibility_assets.defs.collect import resolve_deadline

    shanghai = ZoneInfo("Asia/Shanghai")
    at_two = datetime(2026, 11, 30, 2, 0, tzinfo=shanghai)
    assert resolve_deadline("06:00", at_two) == datetime(2026, 11, 30, 6, 0, tzinfo=shanghai).timestamp()
    at_seven = datetime(2026, 11, 30, 7, 0, tzinfo=shanghai)
    assert resolve_deadline("06:00", at_seven) == datetime(2026, 12, 1, 6, 0, tzinfo=shanghai).timestamp()
    assert resolve_deadline("2026-12-01T05:30:00+08:00") == datetime(2026, 12, 1, 5, 30, tzinfo=shanghai).timestamp()
    assert resolve_deadline(None) is None
