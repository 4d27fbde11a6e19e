"""`visibility demo`: the whole pipeline for a day against the simulated platforms."""

from __future__ import annotations

import sys
import time
from datetime import date as Date, timedelta

from dagster import materialize

from ..defs.clean import brand_catalog
from ..defs.report import visibility_report
from ..config import VisibilityConfig
from ..definitions import defs, resources
from ..instance import get_instance
from ..paths import data_dir
from .partition_runs import QUIET_RUN, PartitionRun, materialize_partitions
from ..tools.simulator.behaviour import PlatformBehaviour, SimulatorSettings
from ..tools.simulator.launch import running_simulators

# Realistic answer times (1-30 s) scaled down 50x, with a few transient faults to show the
# retries; no hangs, which would each cost a platform's whole client timeout.
DEMO_SIMULATOR = SimulatorSettings(seed=7, time_scale=0.02, default=PlatformBehaviour(latency_s=(1.0, 30.0)))
DEMO_FAULT_RATE = 0.03

# What each (day, platform) run materializes: the chain from raw answers to alerts, views
# included; brand_catalog is loaded once before them, the report once after.
ONCE = {"brand_catalog", "visibility_report"}
PARTITION_RUN_SELECTION = sorted(k.to_user_string() for k in defs.resolve_asset_graph().materializable_asset_keys
                                 if k.to_user_string() not in ONCE)


def demo_dates(end: Date, days: int) -> list[str]:
    return [(end - timedelta(days=offset)).isoformat() for offset in range(days - 1, -1, -1)]


def run_demo(config: VisibilityConfig, dates: list[str], out=sys.stdout) -> int:
    started = time.monotonic()
    instance = get_instance()  # set up DAGSTER_HOME once, before the worker processes share it
    settings = DEMO_SIMULATOR
    for platform in config.platforms:
        settings.platforms[platform.name] = PlatformBehaviour(
            rate_limit_rps=platform.rate_limit_rps, latency_s=settings.default.latency_s,
        ).with_transient_faults(DEMO_FAULT_RATE, hangs=False)
    print(f"data directory: {data_dir()}", file=out)
    print(f"simulating {len(config.platforms)} platforms, {len(dates)} day(s): {dates[0]} .. {dates[-1]}",
          file=out, flush=True)
    catalog_run = materialize([brand_catalog], instance=instance, resources=resources(), run_config=QUIET_RUN)
    print(f"brand catalog {config.catalog.version}: {len(config.brands)} brands"
          f" {'loaded' if catalog_run.success else 'FAILED'}", file=out, flush=True)
    runs: list[PartitionRun] = []
    with running_simulators(config, settings):
        for day in dates:
            keys = [(day, p.name) for p in config.platforms]
            runs += materialize_partitions(keys, run_config=QUIET_RUN, selection=PARTITION_RUN_SELECTION,
                                           on_done=lambda run: _progress(run, out))
    print_summary(runs, out)
    report = materialize([visibility_report], instance=instance, resources=resources(), run_config=QUIET_RUN,
                         raise_on_error=False)
    report_path = None
    if report.success:
        report_path = report.asset_materializations_for_node("visibility_report")[0].metadata["path"].value
    print(f"wall time: {time.monotonic() - started:.1f} s", file=out)
    print(f"report: {report_path or 'FAILED'}", file=out)
    return 0 if report.success and all(r.success for r in runs) else 1


def _progress(run: PartitionRun, out) -> None:
    stored = run.metadata.get("raw_ai_responses", {}).get("answers_stored", 0)
    valid = run.metadata.get("cleaned_samples", {}).get("valid", 0)
    state = "done" if run.success else f"FAILED ({run.error})"
    print(f"  {run.date} {run.platform:<10} {state}: {stored} answers, {valid} valid", file=out, flush=True)


def print_summary(runs: list[PartitionRun], out) -> None:
    print(f"\n{'date':<11} {'platform':<10} {'answers':>7} {'failed':>6} {'retries':>7} "
          f"{'p50 ms':>7} {'p95 ms':>7} {'valid':>6} {'mentions':>8}  status", file=out)
    for run in runs:
        meta = run.metadata.get("raw_ai_responses", {})
        cleaned = run.metadata.get("cleaned_samples", {})
        retries = meta.get("http_attempts", 0) - meta.get("sent", 0) if meta else 0
        status = "ok" if run.success else f"FAILED: {run.error}"
        print(f"{run.date:<11} {run.platform:<10} {meta.get('answers_stored', '-'):>7} "
              f"{meta.get('failed', '-'):>6} {retries:>7} {_fmt(meta.get('latency_p50_ms')):>7} "
              f"{_fmt(meta.get('latency_p95_ms')):>7} {cleaned.get('valid', '-'):>6} "
              f"{cleaned.get('accepted_mentions', '-'):>8}  {status}", file=out)


def _fmt(value) -> str:
    return "-" if value is None else f"{value:.0f}"
