"""`visibility bench serve`: the workspace over the warehouse `bench metrics` builds (D days x
6 platforms, 200 answers a partition, with their texts, matches and attempts added), served by
`visibility serve` in its own process: the server time (its Server-Timing header) of each view
and API endpoint, p50 and p95 over varied filters; then C clients at once for S seconds."""

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
from datetime import timedelta
from pathlib import Path

import httpx
import yaml

from visibility_assets.tools.bench import LAST_DAY, scratch_home
from visibility_assets.tools.bench.metrics import BRANDS_PER_CATEGORY, CATEGORIES, build_metrics_warehouse
from visibility_assets.tools.simulator.answers import KNOWN_PLATFORMS

USER, PASSWORD = "bench", "bench password"
VIEWS = ("overview", "competitors", "questions", "answers", "sources", "alerts")

# The answers behind the synthetic brand results: a text naming each brand it names, its alias
# matches at their places, one HTTP attempt each.
ANSWER_TEXTS = """
INSERT INTO raw_ai_responses BY NAME
SELECT s.request_key, s.date, s.platform, s.question_id, '问题 ' || s.question_id AS question_text, s.category,
       'RECOMMEND' AS scene, s.round, 'bench-model' AS model, '{}' AS params_json, 'bench' AS prompt_hash,
       1 AS attempt, 'bench' AS run_id,
       '以下是几个值得考虑的选择：' || chr(10) || coalesce(string_agg('1. **' || b.brand || '**：功能完整，价格适中。',
           chr(10) ORDER BY b.brand), '暂无推荐。') AS answer_text,
       '{}' AS payload_json, md5(s.request_key) AS content_hash, 800.0 AS latency_ms, now() AS received_at,
       'answered' AS outcome, 'stop' AS finish_reason
FROM cleaned_samples AS s
LEFT JOIN sample_brand_results AS b ON b.request_key = s.request_key AND b.mentioned
GROUP BY ALL
ORDER BY s.date, s.platform  -- as nightly runs append them: partition after partition
"""
MATCHES = """
INSERT INTO entity_matches BY NAME
SELECT b.request_key, b.date, b.platform, b.brand, b.category AS brand_category, b.brand AS alias,
       strpos(r.answer_text, b.brand) - 1 AS start_pos, strpos(r.answer_text, b.brand) - 1 + length(b.brand) AS end_pos,
       b.brand AS matched_text, true AS accepted, 'accepted' AS rule
FROM sample_brand_results AS b JOIN raw_ai_responses AS r USING (request_key)
WHERE b.mentioned
ORDER BY b.date, b.platform
"""
ATTEMPTS = """
INSERT INTO http_attempts BY NAME
SELECT request_key, 1 AS attempt, 'bench' AS run_id, date, platform, received_at AS started_at,
       received_at AS finished_at, 200 AS http_status, 800.0 AS latency_ms
FROM raw_ai_responses
ORDER BY date, platform
"""


def run_serve_bench(days: int = 90, clients: int = 50, duration_s: float = 60.0, samples: int = 30,
                    workers: int = 2, progress=lambda message: print(message, file=sys.stderr)) -> dict:
    names = KNOWN_PLATFORMS[:6]
    with scratch_home("bench-serve-") as home:
        config_dir = _bench_config(Path(home) / "config", names)
        os.environ["VISIBILITY_CONFIG_DIR"] = str(config_dir)
        built = build_metrics_warehouse(days, names, 200, "sqlite", progress)
        _add_answer_texts()
        from visibility_assets.serve.accounts import Accounts
        Accounts.under(Path(home)).add(USER, "analyst", PASSWORD)
        progress(f"bench serve: {built['answers']} answers; starting visibility serve ({workers} workers)")
        with running_workspace([*SERVE, "--workers", str(workers)]) as base:
            cookies = _log_in(base)
            requests = _requests(days, names)
            per_endpoint = _per_endpoint(base, cookies, requests, samples)
            progress(f"bench serve: {clients} clients for {duration_s:.0f} s")
            load = asyncio.run(_load(base, cookies, requests, clients, duration_s))
    slowest = max(per_endpoint.values(), key=lambda e: e["p95_ms"])
    return {"days": days, "platforms": len(names), "answers": built["answers"], "workers": workers,
            "endpoints": per_endpoint, "max_p95_ms": slowest["p95_ms"],
            "views_under_300ms_p95": all(e["p95_ms"] < 300 for e in per_endpoint.values()),
            "load": load,
            "definition": "server time: the Server-Timing header (app;dur), from the request reaching the app to its"
                          f" answer starting; p50/p95 over {samples} requests per endpoint with varied brands,"
                          " periods and platforms, one at a time. load: C clients at once, each a logged-in session"
                          " asking a random view or endpoint; errors: any answer but 200, or no answer"}


def _bench_config(directory: Path, platforms: tuple[str, ...]) -> Path:
    from visibility_assets.config.loading import EXAMPLE_CONFIG_DIR
    directory.mkdir(parents=True)
    brands = [{"name": f"{c}-brand-{b}", "category": c, "aliases": [f"{c}-brand-{b}"], **({"own": True} if i == 0 else {})}
              for i, (c, b) in enumerate((c, b) for c in CATEGORIES for b in range(BRANDS_PER_CATEGORY))]
    questions = [{"id": f"q{i}", "text": f"问题 q{i}", "category": CATEGORIES[i % len(CATEGORIES)]} for i in range(45)]
    example = yaml.safe_load((EXAMPLE_CONFIG_DIR / "platforms.yaml").read_text(encoding="utf-8"))
    chosen = [p for p in example["platforms"] if p["name"] in platforms]
    for name, content in (("brands.yaml", {"brands": brands}), ("questions.yaml", {"questions": questions}),
                          ("platforms.yaml", {"platforms": chosen})):
        (directory / name).write_text(yaml.safe_dump(content, allow_unicode=True), encoding="utf-8")
    return directory


def _add_answer_texts() -> None:
    from visibility_assets.warehouse.db import ensure_table
    from visibility_assets.warehouse.lake import lake_settings, write_with_retry
    from visibility_assets.warehouse.tables import ENTITY_MATCHES, HTTP_ATTEMPTS, RAW_AI_RESPONSES, SAMPLE_CITATIONS

    def add(conn) -> None:
        for table in (RAW_AI_RESPONSES, ENTITY_MATCHES, HTTP_ATTEMPTS, SAMPLE_CITATIONS):
            ensure_table(conn, table)
        for statement in (ANSWER_TEXTS, MATCHES, ATTEMPTS):
            conn.execute(statement)
    write_with_retry(lake_settings(), add)


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


def _requests(days: int, platforms: tuple[str, ...]) -> list[tuple[str, str]]:
    """(endpoint, URL) pairs over varied filters: brands, periods of 1, 7 and 30 days, one or
    all platforms."""
    rng = random.Random(7)
    urls = []
    for view in VIEWS:
        for prefix in ("/", "/api/"):
            for _ in range(40):
                brand = f"{rng.choice(CATEGORIES)}-brand-{rng.randrange(BRANDS_PER_CATEGORY)}"
                length = rng.choice((1, 7, 30))
                end = LAST_DAY - timedelta(days=rng.randrange(max(1, days - length)))
                platform = rng.choice(("", rng.choice(platforms)))
                query = f"brand={brand}&from={end - timedelta(days=length - 1)}&to={end}"
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
