"""`visibility bench history`: N nights of the example config (at 100 requests per second per
platform), and what a night, the workspace and a backfill cost once they are behind it.

The first and the last night are real: `visibility demo`'s night (the simulated platforms on
loopback, every platform's nightly run in a worker process, the catalog run before and the
after-night run after), timed with the CPU of every process it starts. The nights between are
written the way nightly runs write them, without HTTP (history_nights.py), with the shipped
maintenance after the nights its schedule picks. Then, on the warehouse of all N nights: every
workspace view and API endpoint (server time, p50 and p95 over varied brands, periods and
platforms, as `bench serve` asks them), the alias-change backfill of the whole history, and
the sizes of the lake, its catalog and Dagster's storage.
"""

from __future__ import annotations

import io
import os
import re
import shutil
import socket
import sys
import time
from datetime import UTC, date, datetime, timedelta
from pathlib import Path

import yaml

from visibility_assets.tools.bench import LAST_DAY, scratch_home

RATE_RPS, CONCURRENCY = 100, 32  # the example config driven hard: a night is mostly its fixed costs


def history_config(target: Path, brands: int = 0, questions: int | None = None) -> Path:
    """The example config at RATE_RPS and CONCURRENCY per platform, its simulators on a free port;
    with `brands`, the catalog grown to that many brands (added_brands); with `questions`, only
    its first N questions (a smaller night, for a quick look)."""
    from visibility_assets.config import EXAMPLE_CONFIG_DIR

    shutil.copytree(EXAMPLE_CONFIG_DIR, target)
    if brands:
        add_brands(target / "brands.yaml", brands)
    if questions is not None:
        path = target / "questions.yaml"
        asked = yaml.safe_load(path.read_text(encoding="utf-8"))
        asked["questions"] = asked["questions"][:questions]
        path.write_text(yaml.safe_dump(asked, allow_unicode=True), encoding="utf-8")
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    path = target / "platforms.yaml"
    platforms = yaml.safe_load(path.read_text(encoding="utf-8"))
    for platform in platforms["platforms"]:
        platform["base_url"] = re.sub(r"^http://127\.0\.0\.1:\d+", f"http://127.0.0.1:{port}", platform["base_url"])
        platform.update(rate_limit_rps=RATE_RPS, max_concurrency=CONCURRENCY)
    path.write_text(yaml.safe_dump(platforms, allow_unicode=True), encoding="utf-8")
    return target


def add_brands(path: Path, total: int) -> None:
    """The catalog grown to `total` brands, spread evenly over its categories: each added brand
    named in Chinese and in English, with a third alias for every other one (2-3 aliases, as a
    large deployment's catalog has them). The answers mention the example's brands; the added
    ones are the long tail every metric, page and grid still carries."""
    catalog = yaml.safe_load(path.read_text(encoding="utf-8"))
    categories = sorted({brand["category"] for brand in catalog["brands"]})
    for index in range(total - len(catalog["brands"])):
        category = categories[index % len(categories)]
        number = index // len(categories) + 1
        aliases = [f"{category}品牌{number:04d}", f"{category.title()} Brand {number:04d}"]
        if number % 2:
            aliases.append(f"{category.upper()}-B{number:04d}")
        catalog["brands"].append({"name": aliases[0], "category": category, "aliases": aliases})
    path.write_text(yaml.safe_dump(catalog, allow_unicode=True), encoding="utf-8")


def real_night(config, day: date) -> dict:
    """`visibility demo`'s night for `day`: wall time, the CPU of every process, peak memory."""
    from visibility_assets.tools.bench.night import ProcessTree
    from visibility_assets.tools.demo import run_demo

    log = io.StringIO()
    started, began = time.monotonic(), time.time()
    with ProcessTree() as tree:
        status = run_demo(config, [day.isoformat()], out=log)
    wall = time.monotonic() - started
    if status != 0:
        raise RuntimeError(f"bench history: the night of {day} failed:\n{log.getvalue()[-3000:]}")
    return {"wall_s": round(wall, 2), "cpu_s": round(tree.cpu_s, 1), "peak_memory_mb": round(tree.peak_pss_bytes / 2**20),
            "largest_process_mb": round(tree.largest_pss_bytes / 2**20),
            "steps_s": step_seconds(began)}


def step_seconds(since: float) -> dict[str, float]:
    """Where a night's time went: each step's seconds, summed over the runs created since `since`
    (the platforms' runs side by side, then the after-night run), from Dagster's event log."""
    from dagster import DagsterEventType, RunsFilter

    from visibility_assets.operate.instance import get_instance

    instance = get_instance()
    kinds = {DagsterEventType.STEP_START, DagsterEventType.STEP_SUCCESS, DagsterEventType.STEP_FAILURE}
    totals: dict[str, float] = {}
    for record in instance.get_run_records(RunsFilter(created_after=datetime.fromtimestamp(since, UTC))):
        started: dict[str, float] = {}
        for entry in instance.all_logs(record.dagster_run.run_id, of_type=kinds):
            if entry.dagster_event.event_type == DagsterEventType.STEP_START:
                started[entry.step_key] = entry.timestamp
            elif entry.step_key in started:
                key = f"{record.dagster_run.job_name}.{entry.step_key}"
                totals[key] = round(totals.get(key, 0.0) + entry.timestamp - started.pop(entry.step_key), 2)
    return dict(sorted(totals.items()))


def storage_sizes() -> dict:
    """The lake's data files, its catalog and Dagster's storage, now."""
    from visibility_assets.core.paths import dagster_home
    from visibility_assets.warehouse.lake import lake_settings

    settings = lake_settings()
    data = [p for p in Path(settings.data_path).rglob("*.parquet")]
    catalog = Path(settings.catalog.partition(":")[2])
    catalog_bytes = sum(p.stat().st_size for p in catalog.parent.glob(catalog.name + "*") if p.is_file())
    dagster_bytes = sum(p.stat().st_size for p in dagster_home().rglob("*") if p.is_file())
    return {"lake_files": len(data), "lake_mb": round(sum(p.stat().st_size for p in data) / 2**20, 2),
            "catalog_mb": round(catalog_bytes / 2**20, 2), "dagster_mb": round(dagster_bytes / 2**20, 2)}


def fill_nights(config, days: list[date], progress, processes: int = 2) -> dict:
    """Nights written as nightly runs write them, each followed by the lake maintenance that the
    after-night run applies."""
    from visibility_assets.tools.bench.history_nights import HistoryWriter

    started, maintenance_s, failed_checks, answers = time.monotonic(), 0.0, set(), 0
    with HistoryWriter(config, processes) as writer:
        for index, day in enumerate(days, 1):
            for written in writer.night(day):
                failed_checks.update(written.failed_checks)
                answers += written.answers
            began = time.monotonic()
            writer.maintain(day)
            maintenance_s += time.monotonic() - began
            if index % 30 == 0 or index == len(days):
                progress(f"bench history: {index} of {len(days)} nights written"
                         f" ({time.monotonic() - started:.0f} s), {storage_sizes()}")
    return {"nights": len(days), "answers": answers, "wall_s": round(time.monotonic() - started, 1),
            "maintenance_s": round(maintenance_s, 1), "failed_checks": sorted(failed_checks)}


def alias_backfill(config, first: date, last: date) -> dict:
    """An alias added to the first brand, then the backfill of every platform over all history."""
    from visibility_assets.config import load_config
    from visibility_assets.runs import run_backfill

    path = config.directory / "brands.yaml"
    brands = yaml.safe_load(path.read_text(encoding="utf-8"))
    brands["brands"][0]["aliases"].append(brands["brands"][0]["name"] + " Cloud Services")
    path.write_text(yaml.safe_dump(brands, allow_unicode=True), encoding="utf-8")
    changed = load_config(config.directory)
    log = io.StringIO()
    started = time.monotonic()
    status = run_backfill(changed, first, last, list(changed.platform_names), out=log)
    wall = time.monotonic() - started
    if status != 0:
        raise RuntimeError(f"bench history: the backfill failed:\n{log.getvalue()[-3000:]}")
    return {"backfill_s": round(wall, 1), "backfill_days": (last - first).days + 1}


def run_history_bench(days: int = 365, samples: int = 15, processes: int = 2, questions: int | None = None,
                      progress=lambda message: print(message, file=sys.stderr)) -> dict:
    from visibility_assets.config import load_config
    from visibility_assets.tools.bench.serve import serve_views

    if days < 2:
        raise ValueError("bench history needs at least 2 nights: the first and the last are measured")
    with scratch_home("bench-history-") as home:
        config_dir = history_config(Path(home) / "config", questions=questions)
        os.environ["VISIBILITY_CONFIG_DIR"] = str(config_dir)
        config = load_config(config_dir)
        first, last = LAST_DAY - timedelta(days=days - 1), LAST_DAY
        progress(f"bench history: {days} nights, {first} .. {last}; the first night, real")
        empty = storage_sizes()
        first_night = real_night(config, first)
        after_first = storage_sizes()
        filled = fill_nights(config, [first + timedelta(days=i) for i in range(1, days - 1)], progress, processes)
        before_last = storage_sizes()
        progress("bench history: the last night, real")
        last_night = real_night(config, last)
        after_last = storage_sizes()
        progress("bench history: the workspace's views")
        views = serve_views(Path(home), config, first, last, samples)
        progress("bench history: the alias backfill of all history")
        backfill = alias_backfill(config, first, last)
        after_backfill = storage_sizes()
    slowest = max(views.values(), key=lambda figures: figures["p95_ms"])
    return {
        "days": days, "questions": len(config.questions),
        "first_night_s": first_night["wall_s"], "last_night_s": last_night["wall_s"],
        "night_growth": round(last_night["wall_s"] / first_night["wall_s"], 3),
        "first_night_cpu_s": first_night["cpu_s"], "last_night_cpu_s": last_night["cpu_s"],
        "night_cpu_growth": round(last_night["cpu_s"] / first_night["cpu_s"], 3) if first_night["cpu_s"] else None,
        "first_night": first_night, "last_night": last_night,
        "serve_p95_ms": slowest["p95_ms"], "views": views,
        **after_last, **backfill,
        "lake_mb_per_day": round(after_last["lake_mb"] / days, 3),
        "dagster_mb_first_night": round(after_first["dagster_mb"] - empty["dagster_mb"], 2),
        "lake_mb_first_night": round(after_first["lake_mb"] - empty["lake_mb"], 2),
        "dagster_mb_last_night": round(after_last["dagster_mb"] - before_last["dagster_mb"], 2),
        "lake_mb_last_night": round(after_last["lake_mb"] - before_last["lake_mb"], 2),
        "after_backfill": after_backfill, "filled": filled,
        "definition": "first_night_s, last_night_s: `visibility demo`'s night (every platform of the example config at"
                      f" {RATE_RPS} rps and concurrency {CONCURRENCY}, simulated on loopback) on an empty data"
                      " directory and after N-1 nights; the nights between written as nightly runs write them"
                      " without HTTP, with the shipped maintenance on its schedule; *_cpu_s: every process of the"
                      " night; serve_p95_ms: the slowest view's or endpoint's server time (p95 over varied brands,"
                      " periods and platforms); backfill_s: an alias added, then `visibility backfill` of every"
                      " platform over all N days; lake_files, lake_mb, catalog_mb, dagster_mb: after the last night;"
                      " dagster_mb_*_night, lake_mb_*_night: what the first and the last real night added",
    }
