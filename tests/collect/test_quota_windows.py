"""A fixed quota window (N requests per calendar window), as a platform or a gateway in front of
it enforces: the collector waits for the window to turn instead of burning its retries, with few
429s and in one run, and no request refused in a window is tried again before that window ends.
The windows here last 6 s, not a minute, so that the test is quick; the pacer is told the
window's length the same way. (How close it comes to the time the windows allow is a figure for
a benchmark, not a bound a loaded machine should be able to fail.)"""

import math

import httpx
import pytest

from visibility_assets.collect.client import RetrySettings
from visibility_assets.collect.collector import CollectionSettings, collect_partition
from visibility_assets.collect.journal import CollectionJournal
from visibility_assets.collect.pacing import QuotaWindow
from visibility_assets.config import load_config
from visibility_assets.tools.simulator.behaviour import PlatformBehaviour, SimulatorSettings
from visibility_assets.tools.simulator.server import SimulatorServer
from visibility_assets.warehouse.lake import LakeSettings

from tests.conftest import write_config

pytestmark = [pytest.mark.loopback, pytest.mark.slow]  # each test waits out a 6 s window, by design

WINDOW_S, LIMIT, RPS = 6.0, 12, 5.0
QUESTIONS, ROUNDS = 15, 1  # 15 requests: a window and a quarter


@pytest.mark.parametrize("header", [None, "llm_provider-retry-after"])
def test_a_fixed_window_is_waited_out_not_retried_into_the_breaker(tmp_path, header):
    behaviour = PlatformBehaviour(latency_s=(0.001, 0.005), window_limit=LIMIT, window_s=WINDOW_S,
                                  window_retry_header=header)
    with SimulatorServer(SimulatorSettings(seed=5, default=behaviour), load_config()) as server:
        directory = write_config(tmp_path / "config", server.port, questions=QUESTIONS, rounds=ROUNDS,
                                 rate_limit_rps=RPS)
        config = load_config(directory)
        settings = CollectionSettings(retry=RetrySettings(max_wait_s=2 * WINDOW_S), quota_window_s=WINDOW_S)
        with CollectionJournal(LakeSettings.from_env(tmp_path), "2026-11-05", "deepseek") as journal:
            report = collect_partition(config, config.platform("deepseek"), "2026-11-05", "run", journal, settings)
            ledger = journal.query("SELECT request_key, attempt, http_status, started_at, finished_at"
                                   " FROM journal_attempts WHERE date = $date AND platform = $platform"
                                   " ORDER BY request_key, attempt")
        stats = httpx.get(f"{server.url}/_stats").json()["deepseek"]
    requests = QUESTIONS * ROUNDS
    assert report.succeeded == requests and report.failed == 0 and not report.stopped  # one run, no breaker
    assert report.http_429 <= 5, report.http_429
    assert stats["duplicates"] == 0
    assert math.isclose(stats["received"], requests + report.http_429)
    # A request refused in a window is sent again only once that window has ended, from the
    # refusal that taught the pacer the window on: at once with the header, after
    # QuotaWindow.EVIDENCE_REFUSALS refusals in one window without it (before that, a 429 may be
    # a concurrency limit, retried after a second: inside the window when it comes early).
    window = lambda moment: int(moment.timestamp() // WINDOW_S)  # noqa: E731
    refused = sorted((finished, key) for key, _, status, _, finished in ledger if status == 429)
    learned_after = 1 if header else QuotaWindow.EVIDENCE_REFUSALS
    seen: dict[int, int] = {}
    for refused_at, key in refused:
        seen[window(refused_at)] = seen.get(window(refused_at), 0) + 1
        retries = [started for k, _, _, started, _ in ledger if k == key and started > refused_at]
        assert retries, (key, refused_at)
        if seen[window(refused_at)] >= learned_after:
            assert window(retries[0]) > window(refused_at), (key, refused_at, retries)
