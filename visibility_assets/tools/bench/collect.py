"""`visibility bench collect`: the collector against the simulator, K platforms at once.

The simulator runs in its own process (so its work does not slow the collector's event
loop), each platform with a server-side token bucket of R requests per second, a latency
range and a transient fault mix. The collector drives all platforms from one event loop,
as a run per platform would, with its real pacing, retries, journal and breaker.
"""

from __future__ import annotations

import asyncio
import math
import multiprocessing
import resource
import sys
import tempfile
import time
from pathlib import Path

import httpx

from visibility_assets.collect.client import RetrySettings
from visibility_assets.collect.collector import CollectionSettings, collect_partition_async
from visibility_assets.collect.dialects import DIALECTS
from visibility_assets.collect.journal import CollectionJournal
from visibility_assets.collect.tally import CollectionTally
from visibility_assets.config import EXAMPLE_CONFIG_DIR, Platform, Question, VisibilityConfig, load_config
from visibility_assets.tools.simulator.answers import KNOWN_PLATFORMS
from visibility_assets.tools.simulator.behaviour import PlatformBehaviour, SimulatorSettings
from visibility_assets.tools.simulator.server import SimulatorServer
from visibility_assets.warehouse.lake import LakeSettings

BENCH_DATE = "2026-11-01"


def _serve(settings: SimulatorSettings, config_dir: str, port_pipe) -> None:
    server = SimulatorServer(settings, load_config(config_dir))
    server.start_in_thread()
    port_pipe.send(server.port)
    port_pipe.recv()  # block until the parent says stop
    server.stop()


def _platform_names(count: int) -> list[str]:
    return [KNOWN_PLATFORMS[i] if i < len(KNOWN_PLATFORMS) else f"platform{i + 1}" for i in range(count)]


def dialect_settings(name: str, web_search: bool) -> dict:
    """Each known platform in its own dialect, searching where its API can."""
    dialect = name if name in DIALECTS else "openai"
    return {"dialect": dialect, "web_search": web_search and DIALECTS[dialect].supports_search}


def bench_config(port: int, names: list[str], per_platform: int, rps: float, concurrency: int,
                 timeout_s: float, web_search: bool = False) -> VisibilityConfig:
    """The example brands and questions, with enough question variants for `per_platform` requests."""
    example = load_config(EXAMPLE_CONFIG_DIR)
    rounds = 5
    needed = math.ceil(per_platform / rounds)
    questions = tuple(
        Question(id=f"b{i:05d}", text=base.text if i < len(example.questions) else f"{base.text}（{i}）",
                 category=base.category, priority=base.priority)
        for i, base in ((i, example.questions[i % len(example.questions)]) for i in range(needed))
    )
    platforms = tuple(
        Platform(name=name, base_url=f"http://127.0.0.1:{port}/{name}/v1", model=f"{name}-bench",
                 rate_limit_rps=rps, max_concurrency=concurrency, timeout_s=timeout_s, rounds=rounds,
                 **dialect_settings(name, web_search))
        for name in names
    )
    return VisibilityConfig(example.directory, example.catalog, questions, platforms)


def run_collect_bench(platforms: int = 6, requests: int = 3000, rps: float = 20.0, fault_rate: float = 0.1,
                      latency_s: tuple[float, float] = (0.05, 0.5), storm_share: float = 0.0,
                      concurrency: int = 16, timeout_s: float = 2.0, seed: int = 0, web_search: bool = False,
                      progress=lambda message: print(message, file=sys.stderr)) -> dict:
    names = _platform_names(platforms)
    storm = names[0] if storm_share > 0 else None
    behaviour = PlatformBehaviour(rate_limit_rps=rps, latency_s=latency_s, hang_s=timeout_s * 3)
    behaviour = behaviour.with_transient_faults(fault_rate)
    settings = SimulatorSettings(seed=seed, default=behaviour, known_platforms=frozenset(names))
    if storm:
        from dataclasses import replace
        settings.platforms[storm] = replace(behaviour, throttle_rate=storm_share)

    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    children_before = before.ru_utime + before.ru_stime
    parent, child = multiprocessing.get_context("spawn").Pipe()
    simulator = multiprocessing.get_context("spawn").Process(
        target=_serve, args=(settings, str(EXAMPLE_CONFIG_DIR), child), daemon=True)
    simulator.start()
    try:
        port = parent.recv()
        per_platform = math.ceil(requests / platforms)
        config = bench_config(port, names, per_platform, rps, concurrency, timeout_s, web_search)
        progress(f"bench collect: {platforms} platforms x {per_platform} requests, {rps} rps each,"
                 f" faults {fault_rate:.0%}, web search {'on' if web_search else 'off'}" + (f", 429 storm {storm_share:.0%} on {storm}" if storm else ""))
        with tempfile.TemporaryDirectory(prefix="bench-collect-") as scratch:
            cpu_before = time.process_time()
            reports, stored, wall = asyncio.run(_collect_all(config, Path(scratch), progress))
            collector_cpu = time.process_time() - cpu_before
        stats = httpx.get(f"http://127.0.0.1:{port}/_stats", timeout=10).json()
    finally:
        parent.send("stop")
        simulator.join(10)
        if simulator.is_alive():
            simulator.kill()
    # The simulator is this process's only child: its CPU time is counted once it has ended.
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    figures = summarize(reports, stored, stats, wall, rps, storm, web_search)
    attempts = figures["http_attempts"] or 1
    figures.update(collector_cpu_s=round(collector_cpu, 2),
                   collector_cpu_ms_per_request=round(1000 * collector_cpu / attempts, 3),
                   collector_cpu_share_of_2_cores=round(collector_cpu / (2 * wall), 3) if wall else None,
                   simulator_cpu_s=round(children.ru_utime + children.ru_stime - children_before, 2))
    return figures


async def _collect_all(config: VisibilityConfig, scratch: Path,
                       progress) -> tuple[list[CollectionTally], int, float]:
    """The platforms' reports, the answers their journals hold afterwards, and the wall time."""
    settings = CollectionSettings(retry=RetrySettings(max_attempts=8, base_delay_s=0.2, max_delay_s=5.0),
                                  failure_share_limit=1.0, breaker_consecutive_failures=1_000_000)
    lake = LakeSettings.from_env(scratch)
    journals = [CollectionJournal(lake, BENCH_DATE, p.name) for p in config.platforms]
    started = time.monotonic()
    try:
        reports = await asyncio.gather(*(
            collect_partition_async(config, platform, BENCH_DATE, "bench", journal, settings, progress)
            for platform, journal in zip(config.platforms, journals)
        ))
        wall = time.monotonic() - started
        stored = sum(len(journal.succeeded_keys()) for journal in journals)
    finally:
        for journal in journals:
            journal.close()
    return list(reports), stored, wall


def summarize(reports: list[CollectionTally], stored: int, stats: dict, wall: float, rps: float,
              storm: str | None, web_search: bool = False) -> dict:
    per_platform = {}
    for report in reports:
        # Counted by the server: a tool loop (Kimi's web search) sends several requests per attempt.
        served = stats.get(report.platform, {})
        sent = served.get("received", 0) + served.get("tool_rounds", 0)  # the simulator counts tool rounds apart
        accepted = sent - served.get("status", {}).get("429", 0)
        achieved = accepted / report.wall_s if report.wall_s else 0.0
        per_platform[report.platform] = {
            "requests": report.planned, "succeeded": report.succeeded, "failed": report.failed,
            "wall_s": round(report.wall_s, 2), "achieved_rps": round(achieved, 2),
            "rate_ratio": round(achieved / rps, 3), "http_429": report.http_429,
            "retries": report.attempts - report.to_send, "storm": report.platform == storm,
        }
    requests = sum(r.planned for r in reports)
    attempts = sum(r.attempts for r in reports)
    http_429 = sum(r.http_429 for r in reports)
    permitted = rps * len(reports)
    achieved = sum(p["achieved_rps"] for p in per_platform.values())
    others = [p["rate_ratio"] for p in per_platform.values() if not p["storm"]]
    return {
        "requests": requests,
        "succeeded": sum(r.succeeded for r in reports),
        "stored": stored,  # answers in the journals: must equal succeeded
        "failed": sum(r.failed for r in reports),
        "duplicates": sum(s["duplicates"] for s in stats.values()),
        "wall_s": round(wall, 2),
        "permitted_rps": permitted,
        "achieved_rps": round(achieved, 2),
        "rate_ratio": round(achieved / permitted, 3),
        "goodput_rps": round(sum(r.succeeded for r in reports) / wall, 2) if wall else 0.0,
        "http_429": http_429,
        "http_429_share": round(http_429 / attempts, 4) if attempts else 0.0,
        "retries": attempts - sum(r.to_send for r in reports),
        "http_attempts": attempts,
        "server_received": sum(s["received"] for s in stats.values()),
        "min_rate_ratio_without_storm": min(others) if others else None,
        "storm_platform": storm,
        "platforms": per_platform,
        "web_search": web_search,
        "definition": "achieved_rps: HTTP requests a platform accepted (not 429, as the simulator counted them)"
                      " per second of its collection wall time, summed over platforms; rate_ratio ="
                      " achieved/permitted",
    }
