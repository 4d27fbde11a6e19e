"""The resilient collector against the real simulator: retries, 429s, deadline, breaker, resume."""

import io
import logging
import re
import time
from collections import Counter
from dataclasses import replace
from datetime import UTC, datetime

import httpx
import pytest

from visibility_assets.collect import collector as collector_module
from visibility_assets.collect.client import RetrySettings
from visibility_assets.collect.collector import CollectionSettings, collect_partition
from visibility_assets.collect.errors import ErrorClass, classify_status
from visibility_assets.collect.in_flight import InFlightLog
from visibility_assets.collect.journal import CollectionJournal
from visibility_assets.collect.pacing import AdaptiveRateLimiter
from visibility_assets.collect.tally import CollectionFailed
from visibility_assets.config import MissingApiKey, load_config
from visibility_assets.core.progress import printing_progress
from visibility_assets.core.retry import parse_retry_after
from visibility_assets.tools.simulator import routes as simulator_routes
from visibility_assets.tools.simulator.behaviour import PlatformBehaviour, SimulatorSettings
from visibility_assets.tools.simulator.server import SimulatorServer
from visibility_assets.tools.simulator.transport import IN_PROCESS_URL
from visibility_assets.warehouse.lake import LakeSettings

from tests.conftest import in_process, write_config

DAY = "2026-11-02"
QUICK = CollectionSettings(retry=RetrySettings(max_attempts=4, base_delay_s=0.01, max_delay_s=0.05),
                           checkpoint_interval_s=0.05, timeout_s=1.0)
# Like QUICK, but waits up to the default 30 s the platform asks for.
CAPPED_AT_30_S = CollectionSettings(retry=RetrySettings(max_attempts=4, base_delay_s=0.01),
                                    checkpoint_interval_s=0.05, timeout_s=1.0)
ONE_REQUEST_AN_HOUR = PlatformBehaviour(latency_s=(0, 0.001), rate_limit_rps=1 / 3600)


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
        with CollectionJournal(LakeSettings.from_env(tmp_path / journal_name), DAY, platform) as journal:
            try:
                report = collect_partition(config, config.platform(platform), DAY, "run-1", journal, settings)
            except CollectionFailed as exc:
                report = exc.report
                report.error = str(exc)
            ledger = journal.query(
                "SELECT request_key, attempt, http_status, error_class, started_at, finished_at"
                " FROM journal_attempts WHERE date = $date AND platform = $platform ORDER BY request_key, attempt")
            states = journal.state_counts()
        stats = httpx.get(f"{server.url}/_stats").json().get(platform, {})
    finally:
        if owns_server:
            server.stop()
    return report, ledger, states, stats


@pytest.mark.loopback
def test_transient_faults_are_retried_until_every_request_succeeds(tmp_path):
    behaviour = PlatformBehaviour(latency_s=(0, 0.005), hang_s=3).with_transient_faults(0.4)
    # Enough attempts that none of the 20 runs out of them (the faults drawn depend on the order
    # the requests reach the simulator: at 4 attempts, one request in ~60 failed them all).
    patient = replace(QUICK, retry=replace(QUICK.retry, max_attempts=10))
    report, ledger, states, stats = _collect(tmp_path, behaviour, patient, questions=10)
    assert report.succeeded == report.planned == 20 and report.failed == 0
    assert states == {"succeeded": 20}
    assert len(ledger) == report.attempts > 20  # every attempt is a ledger row
    assert {row[3] for row in ledger} - {None} <= {"server_error", "overloaded", "timeout", "connection", "malformed"}
    assert stats["duplicates"] == 0


@pytest.mark.slow  # over a second by design
@pytest.mark.loopback
def test_a_long_wait_before_a_retry_is_told_with_what_it_follows_and_until_when(tmp_path):
    behaviour = PlatformBehaviour(latency_s=(0, 0.005), hang_s=3).with_transient_faults(0.5)
    said = io.StringIO()
    with printing_progress(said, logging.WARNING):  # as the demo's workers print: the waits only
        report, *_ = _collect(tmp_path, behaviour, replace(QUICK, long_wait_s=0.0))
    assert report.retries_histogram.keys() - {0}  # it did retry
    (line,) = said.getvalue().splitlines()  # one notice: they come at most every 15 s
    assert re.fullmatch(r"\d\d:\d\d:\d\d deepseek 2026-11-02: retrying q\d+ round \d after \w+( \(HTTP \d+\))?:"
                        r" waiting 0 s, until \d\d:\d\d:\d\d; \d+ of 24 requests done", line), line


@pytest.mark.loopback
def test_permanent_errors_are_not_retried(tmp_path):
    behaviour = PlatformBehaviour(latency_s=(0, 0.001), api_key="expected-key")
    settings = CollectionSettings(retry=QUICK.retry, failure_share_limit=1.0, breaker_consecutive_failures=1000)
    report, ledger, states, stats = _collect(tmp_path, behaviour, settings, questions=5, rounds=1)
    assert report.failed == 5 and report.failed_by_class == {"auth": 5}
    assert len(ledger) == 5 and {row[2] for row in ledger} == {401}  # one attempt each
    assert states == {"failed": 5}


@pytest.mark.loopback
def test_a_partition_fails_above_the_failure_share_limit_naming_platform_day_and_classes(tmp_path):
    behaviour = PlatformBehaviour(latency_s=(0, 0.001), api_key="expected-key")
    settings = CollectionSettings(retry=QUICK.retry, failure_share_limit=0.5, breaker_consecutive_failures=1000)
    report, _, states, _ = _collect(tmp_path, behaviour, settings, questions=5, rounds=1)
    assert report.error == f"deepseek {DAY}: 5 of 5 requests failed (100% > limit 50%); by class: {{'auth': 5}}"
    assert states == {"failed": 5}


@pytest.fixture
def sent_by_simulator(monkeypatch) -> dict[str, list[tuple[int, float | None]]]:
    """What the simulator answered each request key, in order: (status, retry-after-ms in seconds)."""
    sent: dict[str, list[tuple[int, float | None]]] = {}
    handle_chat = simulator_routes.handle_chat

    def recorded(app, platform, headers, body):
        reply = handle_chat(app, platform, headers, body)
        retry_after_ms = dict(reply.headers).get("retry-after-ms")
        sent.setdefault(headers.get("idempotency-key"), []).append(
            (reply.status, float(retry_after_ms) / 1000 if retry_after_ms else None))
        return reply

    monkeypatch.setattr(simulator_routes, "handle_chat", recorded)
    return sent


@pytest.fixture
def rates_after_429(monkeypatch) -> list[float]:
    """The collector's pacing rate right after each 429 it was told of."""
    rates: list[float] = []

    class RecordedLimiter(AdaptiveRateLimiter):
        def throttled(self, retry_after: float | None) -> None:
            super().throttled(retry_after)
            rates.append(self.rate)

    monkeypatch.setattr(collector_module, "AdaptiveRateLimiter", RecordedLimiter)
    return rates


@pytest.mark.slow  # over a second by design
@pytest.mark.loopback
def test_429_is_honoured_and_the_rate_lowered(tmp_path, sent_by_simulator, rates_after_429):
    """The config claims 50 rps but the platform permits 5: each 429's wait is kept and the pace drops."""
    behaviour = PlatformBehaviour(latency_s=(0, 0.001), rate_limit_rps=5)
    settings = CollectionSettings(retry=RetrySettings(max_attempts=10, base_delay_s=0.01), checkpoint_interval_s=0.05)
    # One sender: the time between a 429 and the retry is then the Retry-After's, not the queue's.
    report, ledger, _, _ = _collect(tmp_path, behaviour, settings, questions=5, rounds=3,
                                    rate_limit_rps=50, max_concurrency=1)
    assert report.succeeded == 15
    assert 0 < report.http_429 < 15
    by_key: dict[str, list] = {}
    for key, _, status, _, started, finished in ledger:
        by_key.setdefault(key, []).append((status, started, finished))
    waits_kept = 0
    for key, attempts in by_key.items():
        replies = sent_by_simulator[key]
        assert [status for status, _ in replies] == [status for status, _, _ in attempts]  # a reply per attempt
        for (_, asked), (_, _, finished), (_, next_started, _) in zip(replies, attempts, attempts[1:]):
            if asked is not None:  # a 429; retry-after-ms is the precise wait, Retry-After its ceiling
                # The ledger reads the wall clock, the sleep the monotonic one: 1 ms for their drift.
                assert (next_started - finished).total_seconds() >= asked - 0.001
                waits_kept += 1
    assert waits_kept == report.http_429
    assert min(rates_after_429) <= 50 * 0.7  # the first 429 cut the claimed 50 rps by 30%


@pytest.mark.slow  # over a second by design
@pytest.mark.loopback
def test_a_retry_after_beyond_the_cap_leaves_the_requests_pending_and_fails_the_partition(tmp_path):
    """The platform allows one request an hour: nothing is retried before the hour, the run ends at
    once, the rest stays pending, the partition fails naming the wait, and a later run resumes it."""
    started = time.monotonic()
    report, ledger, states, stats = _collect(tmp_path, ONE_REQUEST_AN_HOUR, CAPPED_AT_30_S, questions=6)
    assert time.monotonic() - started < 60  # it waited neither the hour nor the 90 s it would wait
    assert report.http_429 >= 1 and report.failed == 0
    assert max(Counter(key for key, *_ in ledger).values()) == 1  # at most one attempt per request
    assert stats["received"] == len(ledger)
    assert states == {"succeeded": 1, "pending": 11}
    assert report.error == (f"deepseek {DAY}: 11 requests left pending: the platform asked to wait 3600 s"
                            " (Retry-After), beyond the 90 s it waits; a later run resumes them")
    later, _, states, _ = _collect(tmp_path, PlatformBehaviour(latency_s=(0, 0.001)), CAPPED_AT_30_S, questions=6)
    assert later.skipped_done == 1 and later.succeeded == 11
    assert states == {"succeeded": 12}


@pytest.mark.loopback
def test_a_retry_after_ending_past_the_deadline_defers_the_requests(tmp_path):
    """When the platform's wait would end after the deadline, the requests are deferred, not failed."""
    settings = replace(CAPPED_AT_30_S, deadline=time.time() + 600)
    report, _, states, _ = _collect(tmp_path, ONE_REQUEST_AN_HOUR, settings, questions=6)
    assert states == {"succeeded": 1, "deferred": 11} and report.deferred == 11
    assert report.stopped is None


@pytest.mark.slow  # over a second by design
@pytest.mark.loopback
def test_deadline_defers_the_rest_and_the_next_run_collects_it(tmp_path):
    behaviour = PlatformBehaviour(latency_s=(0, 0.001))
    with SimulatorServer(SimulatorSettings(seed=5, default=behaviour)) as server:
        # 3 s of 4.8 s at 5 rps: some answers arrive, the rest is deferred, even on a loaded machine.
        cut_short = CollectionSettings(retry=QUICK.retry, deadline=time.time() + 3.0, checkpoint_interval_s=0.05)
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


@pytest.mark.loopback
def test_breaker_stops_a_platform_that_is_down(tmp_path):
    behaviour = PlatformBehaviour(latency_s=(0, 0.001), server_error_rate=1.0)
    report, ledger, states, stats = _collect(tmp_path, behaviour, questions=40, rounds=3)
    assert report.stopped and "circuit breaker open" in report.error
    assert stats["received"] < 120 * QUICK.retry.max_attempts / 2  # it stopped sending
    assert states.get("pending", 0) > 0  # unsent work is kept for the next run


@pytest.mark.loopback
def test_missing_api_key_fails_before_any_request(tmp_path, monkeypatch):
    monkeypatch.delenv("SIM_KEY_FOR_TEST", raising=False)
    with SimulatorServer(SimulatorSettings()) as server:
        config = load_config(write_config(tmp_path / "config", server.port, api_key_env="SIM_KEY_FOR_TEST"))
        with CollectionJournal(LakeSettings.from_env(tmp_path), DAY, "kimi") as journal, pytest.raises(MissingApiKey, match="SIM_KEY_FOR_TEST"):
            collect_partition(config, config.platform("kimi"), DAY, "run-1", journal, QUICK)
        assert httpx.get(f"{server.url}/_stats").json() == {}


def test_deadline_as_clock_time_is_the_next_such_time_in_shanghai():
    from zoneinfo import ZoneInfo

    from visibility_assets.collect.defs import resolve_deadline

    shanghai = ZoneInfo("Asia/Shanghai")
    at_two = datetime(2026, 11, 30, 2, 0, tzinfo=shanghai)
    assert resolve_deadline("06:00", at_two) == datetime(2026, 11, 30, 6, 0, tzinfo=shanghai).timestamp()
    at_seven = datetime(2026, 11, 30, 7, 0, tzinfo=shanghai)
    assert resolve_deadline("06:00", at_seven) == datetime(2026, 12, 1, 6, 0, tzinfo=shanghai).timestamp()
    assert resolve_deadline("2026-12-01T05:30:00+08:00") == datetime(2026, 12, 1, 5, 30, tzinfo=shanghai).timestamp()
    assert resolve_deadline(None) is None


@pytest.mark.slow  # over a second by design
@pytest.mark.loopback
def test_timeout_s_bounds_the_whole_attempt_against_a_slow_drip(tmp_path):
    """A server that sends two bytes every 0.25 s never trips a per-read timeout (the whole answer
    would take minutes); timeout_s = 1 still ends each attempt, recorded as a timeout."""
    behaviour = PlatformBehaviour(latency_s=(0, 0.001), drip_s=0.25)
    settings = CollectionSettings(retry=RetrySettings(max_attempts=2, base_delay_s=0.01, max_delay_s=0.05),
                                  checkpoint_interval_s=0.05, failure_share_limit=1.0)
    report, ledger, states, _ = _collect(tmp_path, behaviour, settings, questions=1, rounds=1, timeout_s=1)
    assert [row[3] for row in ledger] == ["timeout", "timeout"]
    # At least the timeout, and far from the minutes the answer would take to drip in.
    assert all(1 <= (finished - started).total_seconds() < 30 for *_, started, finished in ledger), ledger
    assert states == {"failed": 1} and report.failed_by_class == {"timeout": 1}


@pytest.mark.loopback
def test_a_long_retry_after_defers_at_the_deadline_even_when_the_wait_cap_allows_it(tmp_path):
    """Retry-After: 3600 with the wait cap raised to an hour and the deadline 120 s away: nothing
    sleeps into the hour or toward the deadline; the waiting requests are deferred at once and the
    answer is kept."""
    patient = CollectionSettings(retry=RetrySettings(max_attempts=4, base_delay_s=0.01, max_wait_s=3600),
                                 checkpoint_interval_s=0.05, timeout_s=1.0, deadline=time.time() + 120)
    started = time.monotonic()
    report, _, states, _ = _collect(tmp_path, ONE_REQUEST_AN_HOUR, patient, questions=6)
    assert time.monotonic() - started < 60  # half the way to the deadline: it did not wait for it
    assert states == {"succeeded": 1, "deferred": 11} and report.stopped is None


@pytest.mark.loopback
@pytest.mark.parametrize("broken", ["empty_choices", "null_content", "json_array", "invalid_utf8"])
def test_a_body_malformed_the_same_way_twice_is_not_retried_again(tmp_path, broken):
    behaviour = PlatformBehaviour(latency_s=(0, 0.001), broken_body=broken)
    settings = CollectionSettings(retry=RetrySettings(max_attempts=6, base_delay_s=0.01, max_delay_s=0.05),
                                  checkpoint_interval_s=0.05, failure_share_limit=1.0,
                                  breaker_consecutive_failures=1000)
    report, ledger, states, stats = _collect(tmp_path, behaviour, settings, questions=2, rounds=1)
    assert [row[3] for row in ledger] == ["malformed"] * 4  # two attempts per request, not six
    assert states == {"failed": 2} and report.failed_by_class == {"malformed": 2}
    assert stats["received"] == 4


@pytest.mark.loopback
def test_bodies_cut_in_different_places_are_still_retried(tmp_path):
    behaviour = PlatformBehaviour(latency_s=(0, 0.001), malformed_rate=0.3)
    settings = replace(QUICK, retry=RetrySettings(max_attempts=6, base_delay_s=0.01, max_delay_s=0.05))
    report, ledger, states, _ = _collect(tmp_path, behaviour, settings, questions=10)
    assert states == {"succeeded": 20} and report.failed == 0
    assert sum(1 for row in ledger if row[3] == "malformed") > 0


@pytest.mark.loopback
def test_answers_received_before_a_crash_are_kept_from_the_log_and_never_asked_again(tmp_path):
    """A run killed between two checkpoints had logged its answers as they came: the next run
    stores them from the log and sends only what was never answered."""
    from visibility_assets.collect.plan import plan_requests
    from visibility_assets.tools.simulator.offline import OfflinePlatforms

    with SimulatorServer(SimulatorSettings(seed=5, default=PlatformBehaviour(latency_s=(0, 0.001)))) as server:
        config = load_config(write_config(tmp_path / "config", server.port, questions=6))
        platform = config.platform("deepseek")
        lake = LakeSettings.from_env(tmp_path / "j")
        planned = plan_requests(config, platform, DAY)
        answered = [OfflinePlatforms(config, SimulatorSettings(seed=5)).answer(platform, r, "run-dead")
                    for r in planned[:5]]
        with CollectionJournal(lake, DAY, "deepseek") as journal:  # the first run: answers logged, then killed
            journal.register_plan(planned)
            log = journal.in_flight_log()
            for outcome in answered:
                journal.log_answer(log, outcome)
            log.close()
        with CollectionJournal(lake, DAY, "deepseek") as journal:
            report = collect_partition(config, platform, DAY, "run-2", journal, QUICK)
            stored = dict(journal.query("SELECT request_key, answer_text FROM journal_answers"
                                        " WHERE date = $date AND platform = $platform"))
            states = journal.state_counts()
        stats = httpx.get(f"{server.url}/_stats").json()["deepseek"]
    assert report.answers_recovered == 5 and report.skipped_done == 5 and report.succeeded == len(planned) - 5
    assert set(stats["received_by_key"]) == {r.request_key for r in planned[5:]}  # none of the five asked again
    assert {o.request.request_key: o.answer.text for o in answered}.items() <= stored.items()
    assert len(stored) == len(planned) and states == {"succeeded": len(planned)}


@pytest.mark.loopback
@pytest.mark.parametrize("where", ["loopback", "in process"])
def test_every_request_the_platform_received_was_logged_in_flight_before_its_answer(tmp_path, monkeypatch, where):
    """The in-flight log has a line for each attempt whose body went out, written before its
    answer could arrive: over loopback (httpcore's trace) and through the in-process simulator."""
    logged: list[tuple[str, str]] = []
    sent, answered = InFlightLog.sent, InFlightLog.answered
    monkeypatch.setattr(InFlightLog, "sent", lambda log, attempt: (logged.append(("sent", attempt.request_key)),
                                                                   sent(log, attempt)))
    monkeypatch.setattr(InFlightLog, "answered", lambda log, attempt_row, answer_row: (
        logged.append(("answered", attempt_row[0])), answered(log, attempt_row, answer_row)))
    behaviour = PlatformBehaviour(latency_s=(0, 0.002)).with_transient_faults(0.2, hangs=False)
    settings = SimulatorSettings(seed=5, default=behaviour)
    if where == "loopback":
        report, _, _, stats = _collect(tmp_path, behaviour, questions=6)
        received = stats["received"]
    else:
        with in_process(settings) as transport:
            config = load_config(write_config(tmp_path / "config", IN_PROCESS_URL, questions=6))
            with CollectionJournal(LakeSettings.from_env(tmp_path / "j"), DAY, "deepseek") as journal:
                report = collect_partition(config, config.platform("deepseek"), DAY, "run-1", journal, QUICK)
            received = transport.app.stats["deepseek"].received
    assert report.succeeded == report.planned == 12
    assert sum(kind == "sent" for kind, _ in logged) == received >= 12
    for index, (kind, key) in enumerate(logged):
        if kind == "answered":
            assert ("sent", key) in logged[:index], key
