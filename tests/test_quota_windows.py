"""A fixed quota window (N requests per calendar window), as a platform or a gateway in front of
it enforces: the collector waits for the window to turn instead of burning its retries, within
1.3x the time the windows allow, with few 429s and in one run. The windows here last 6 s, not a
minute, so that the test is quick; the pacer is told the window's length the same way."""

import math
import time

import httpx
import pytest

from visibility_assets.collect.client import RetrySettings
from visibility_assets.collect.collector import CollectionSettings, collect_partition
from visibility_assets.collect.journal import CollectionJournal
from visibility_assets.config import load_config
from visibility_assets.tools.simulator.behaviour import PlatformBehaviour, SimulatorSettings
from visibility_assets.tools.simulator.server import SimulatorServer
from visibility_assets.warehouse.lake import LakeSettings

from .conftest import write_config

pytestmark = pytest.mark.slow  # a real simulator on loopback

WINDOW_S, LIMIT, RPS = 6.0, 12, 5.0
QUESTIONS, ROUNDS = 9, 2  # 18 requests: a window and a half


def windows_allow(start: float, requests: int) -> float:
    """The shortest collection the windows allow: RPS apart, at most LIMIT per window."""
    moment, sent = start, {}
    for _ in range(requests):
        window = int(moment // WINDOW_S)
        if sent.get(window, 0) >= LIMIT:
            window += 1
            moment = window * WINDOW_S
        sent[window] = sent.get(window, 0) + 1
        moment += 1 / RPS
    return moment - start


@pytest.mark.parametrize("header", [None, "llm_provider-retry-after"])
def test_a_fixed_window_is_waited_out_not_retried_into_the_breaker(tmp_path, header):
    behaviour = PlatformBehaviour(latency_s=(0.001, 0.005), window_limit=LIMIT, window_s=WINDOW_S,
                                  window_retry_header=header)
    with SimulatorServer(SimulatorSettings(seed=5, default=behaviour), load_config()) as server:
        directory = write_config(tmp_path / "config", server.port, questions=QUESTIONS, rounds=ROUNDS,
                                 rate_limit_rps=RPS)
        config = load_config(directory)
        settings = CollectionSettings(retry=RetrySettings(max_wait_s=2 * WINDOW_S), quota_window_s=WINDOW_S)
        if time.time() % WINDOW_S > WINDOW_S - 1:
            time.sleep(1.0)  # not right at a turn: the ideal below starts where the run does
        started_wall, started = time.time(), time.monotonic()
        with CollectionJournal(LakeSettings.from_env(tmp_path), "2026-11-05", "deepseek") as journal:
            report = collect_partition(config, config.platform("deepseek"), "2026-11-05", "run", journal, settings)
        took = time.monotonic() - started
        stats = httpx.get(f"{server.url}/_stats").json()["deepseek"]
    requests = QUESTIONS * ROUNDS
    assert report.succeeded == requests and report.failed == 0 and not report.stopped  # one run, no breaker
    assert report.http_429 <= 5, report.http_429
    assert stats["duplicates"] == 0
    # At most one window more than the windows allow: on a loaded machine a request can slip past
    # a window's end and wait for the next one (seen once in CI: 7.7 s against 3.6 s).
    assert took <= windows_allow(started_wall, requests) + WINDOW_S + 0.5, (took, windows_allow(started_wall, requests))
    assert math.isclose(stats["received"], requests + report.http_429)
