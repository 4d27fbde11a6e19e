"""`visibility bench serve`: the workspace over D nights of the example config written the way
nightly runs write them (history_nights.py: each partition's commits, the maintenance on its
schedule; never compacted by hand), served by `visibility serve` in its own process: the server
time (its Server-Timing header) of each view and API endpoint, p50 and p95 over varied filters;
then C clients at once for S seconds."""

from __future__ import annotations

import asyncio
import os
import random
import re
import socket
import statistics
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import date, timedelta
from pathlib import Path

import httpx

from visibility_assets.tools.bench import LAST_DAY, scratch_home

USER, PASSWORD = "bench", "bench password"
VIEWS = ("overview", "competitors", "questions", "answers", "sources", "alerts", "review", "accuracy")


def run_serve_bench(days: int = 90, clients: int = 50, duration_s: float = 60.0, samples: int = 30,
                    workers: int = 2, brands: int = 0,
                    progress=lambda message: print(message, file=sys.stderr)) -> dict:
    from visibility_assets.config import load_config
    from visibility_assets.tools.bench.history import fill_nights, history_config, storage_sizes

    with scratch_home("bench-serve-") as home:
        config_dir = history_config(Path(home) / "config", brands)
        os.environ["VISIBILITY_CONFIG_DIR"] = str(config_dir)
        config = load_config(config_dir)
        first = LAST_DAY - timedelta(days=days - 1)
        _load_catalog(config)
        filled = fill_nights(config, [first + timedelta(days=i) for i in range(days)], progress)
        sizes = storage_sizes()
        progress(f"bench serve: {days} nights written ({filled['wall_s']} s), {sizes};"
                 f" starting visibility serve ({workers} workers)")
        with logged_in_workspace(Path(home), workers) as (base, cookies):
            requests = view_requests(config, first, LAST_DAY)
            per_endpoint = _per_endpoint(base, cookies, requests, samples)
            progress(f"bench serve: {clients} clients for {duration_s:.0f} s")
            load = asyncio.run(_load(base, cookies, requests, clients, duration_s))
    slowest = max(per_endpoint.values(), key=lambda e: e["p95_ms"])
    return {"days": days, "platforms": len(config.platforms), "brands": len(config.brands),
            "answers": filled["answers"], "workers": workers,
            **sizes, "endpoints": per_endpoint, "max_p95_ms": slowest["p95_ms"],
            "views_under_300ms_p95": all(e["p95_ms"] < 300 for e in per_endpoint.values()),
            "load": load,
            "definition": "D nights of the example config written as nightly runs write them (no compaction but"
                          " the shipped maintenance's); server time: the Server-Timing header (app;dur), from the"
                          " request reaching the app to its answer starting; p50/p95 over"
                          f" {samples} requests per endpoint with varied brands, periods (1, 7, 30 days) and"
                          " platforms, one at a time. load: C clients at once, each a logged-in session asking a"
                          " random view or endpoint; errors: any answer but 200, or no answer"}


def serve_views(home: Path, config, first: date, last: date, samples: int, workers: int = 2) -> dict:
    """Each view's and API endpoint's server time over the warehouse of the data directory `home`."""
    with logged_in_workspace(home, workers) as (base, cookies):
        return _per_endpoint(base, cookies, view_requests(config, first, last), samples)


def _load_catalog(config) -> None:
    """brands.yaml into the warehouse, as the first night's catalog run does."""
    from visibility_assets.definitions import build_definitions
    from visibility_assets.operate.automation import catalog_job
    from visibility_assets.operate.instance import get_instance
    from visibility_assets.partition_run import run_job

    if not run_job(build_definitions(config), catalog_job.name, get_instance()).success:
        raise RuntimeError("bench serve: the brand catalog did not load")


@contextmanager
def logged_in_workspace(home: Path, workers: int) -> Iterator[tuple[str, httpx.Cookies]]:
    from visibility_assets.serve.accounts import Accounts

    Accounts.under(home).add(USER, "analyst", PASSWORD)
    with running_workspace([*SERVE, "--workers", str(workers)]) as base:
        yield base, _log_in(base)


@contextmanager
def running_workspace(command: list[str], env: dict | None = None, cwd: Path | None = None,
                      timeout_s: float = 60.0) -> Iterator[str]:
    """`visibility serve` started as `command` (without --port: a free port is added) until the
    block ends; yields its base URL once /healthz answers. Raises RuntimeError with the server's
    output when it does not start."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    server = subprocess.Popen([*command, "--port", str(port)], env=env if env is not None else dict(os.environ),
                              cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    base, deadline = f"http://127.0.0.1:{port}", time.monotonic() + timeout_s
    try:
        while True:
            try:
                if httpx.get(base + "/healthz", timeout=1).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            if server.poll() is not None or time.monotonic() > deadline:
                server.kill()
                raise RuntimeError("visibility serve did not start: " + server.stderr.read().decode()[-2000:])
            time.sleep(0.2)
        yield base
    finally:
        server.terminate()
        server.wait(timeout=30)


SERVE = [sys.executable, "-m", "visibility_assets.cli", "serve"]


def _log_in(base: str) -> httpx.Cookies:
    with httpx.Client(base_url=base) as client:
        form = client.get("/login")
        token = re.search(r'name="csrf" value="([^"]*)"', form.text).group(1)
        answer = client.post("/login", data={"name": USER, "password": PASSWORD, "csrf": token, "next": "/overview"})
        if answer.status_code != 303 and not answer.url.path.endswith("/overview"):
            raise RuntimeError(f"bench serve: cannot log in ({answer.status_code})")
        return client.cookies


def view_requests(config, first: date, last: date) -> list[tuple[str, str]]:
    """(endpoint, URL) pairs over varied filters: the config's brands, periods of 1, 7 and 30
    days ending anywhere in first..last, one or all platforms."""
    rng = random.Random(7)
    brands, platforms = [b.name for b in config.brands], list(config.platform_names)
    span = (last - first).days + 1
    urls = []
    for view in VIEWS:
        for prefix in ("/", "/api/"):
            for _ in range(40):
                length = min(span, rng.choice((1, 7, 30)))
                end = last - timedelta(days=rng.randrange(max(1, span - length + 1)))
                query = f"brand={rng.choice(brands)}&from={end - timedelta(days=length - 1)}&to={end}"
                platform = rng.choice(("", rng.choice(platforms)))
                if platform:
                    query += f"&platform={platform}"
                if view == "answers":
                    query += "&named=yes"
                urls.append((prefix + view, f"{prefix}{view}?{query}"))
    return urls


def _per_endpoint(base: str, cookies, requests, samples: int) -> dict:
    timings: dict[str, list[float]] = {}
    with httpx.Client(base_url=base, cookies=cookies, timeout=60) as client:
        for endpoint, url in requests:
            if len(timings.setdefault(endpoint, [])) >= samples:
                continue
            answer = client.get(url)
            if answer.status_code != 200:
                raise RuntimeError(f"bench serve: {url} answered {answer.status_code}: {answer.text[:300]}")
            timings[endpoint].append(_server_ms(answer))
    return {endpoint: _percentiles(values) for endpoint, values in timings.items()}


async def _load(base: str, cookies, requests, clients: int, duration_s: float) -> dict:
    latencies: list[float] = []
    errors: list[str] = []
    stop = time.monotonic() + duration_s

    async def client(seed: int) -> None:
        rng = random.Random(seed)
        async with httpx.AsyncClient(base_url=base, cookies=cookies, timeout=60) as session:
            while time.monotonic() < stop:
                _, url = rng.choice(requests)
                started = time.perf_counter()
                try:
                    answer = await session.get(url)
                    if answer.status_code != 200:
                        errors.append(f"{answer.status_code} {url}")
                except httpx.HTTPError as exc:
                    errors.append(f"{type(exc).__name__} {url}")
                latencies.append((time.perf_counter() - started) * 1000)

    started = time.monotonic()
    await asyncio.gather(*(client(i) for i in range(clients)))
    wall = time.monotonic() - started
    return {"clients": clients, "duration_s": round(wall, 1), "requests": len(latencies), "errors": len(errors),
            "first_errors": errors[:5], "requests_per_s": round(len(latencies) / wall, 1),
            **{f"client_{k}": v for k, v in _percentiles(latencies).items()}}


def _server_ms(answer: httpx.Response) -> float:
    return float(answer.headers["server-timing"].split("dur=")[1])


def _percentiles(values: list[float]) -> dict:
    ordered = sorted(values)
    return {"n": len(ordered), "p50_ms": round(statistics.median(ordered), 1),
            "p95_ms": round(ordered[max(0, int(round(0.95 * len(ordered))) - 1)], 1)}
