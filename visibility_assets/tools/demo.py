"""`visibility demo`'s night: every platform for each day against the simulated platforms, between
one catalog run before and one report run after, as the schedule and sensors run them (the
command is cli/demo.py; `visibility bench night` runs the same night on a bigger config)."""

from __future__ import annotations

import sys
import time
from typing import TextIO

from visibility_assets.collect.plan import requests_per_answer
from visibility_assets.config import VisibilityConfig
from visibility_assets.core.faults import as_disk_full
from visibility_assets.core.paths import data_dir
from visibility_assets.tools.simulator.behaviour import PlatformBehaviour, SimulatorSettings
from visibility_assets.tools.simulator.launch import running_simulators

# Realistic answer times (1-30 s) scaled down 50x, with a few transient faults to show the
# retries; no hangs, which would each cost a platform's whole client timeout.
DEMO_SIMULATOR = SimulatorSettings(seed=7, time_scale=0.02, default=PlatformBehaviour(latency_s=(1.0, 30.0)))
DEMO_FAULT_RATE = 0.03
# A run's start (fork, run records, plan committed) takes ~0.6 s on a free core.
HEAD_START_S = 1.0


def run_demo(config: VisibilityConfig, dates: list[str], out: TextIO | None = None,
             started: float | None = None) -> int:
    """The nightly chain of every platform for each day, in worker processes, between one
    catalog run before and one report run after, as the schedule and sensors run them.
    started: when the command started (time.monotonic()), where the wall time it prints counts
    from (its imports and config included); by default, this call."""
    out = out or sys.stdout  # the stream of the call (a test's, a redirected one), not of the import
    started = time.monotonic() if started is None else started
    from visibility_assets.worker_server import start_worker_server

    start_worker_server()  # started already by the command; a caller of its own (a bench) starts it here
    # Dagster is imported only here: `visibility analyze` and --help start without it.
    from visibility_assets.definitions import build_definitions
    from visibility_assets.operate.automation import catalog_job
    from visibility_assets.operate.failed_runs import report_failed_runs
    from visibility_assets.operate.instance import get_instance
    from visibility_assets.partition_run import QUIET_RUN, run_job
    from visibility_assets.runs import materialize_partitions

    settings = DEMO_SIMULATOR
    switch = demo_model_switch(config, dates)
    for platform in config.platforms:
        settings.platforms[platform.name] = PlatformBehaviour(
            rate_limit_rps=platform.rate_limit_rps, latency_s=settings.default.latency_s,
            model_switch=switch if platform is config.platforms[0] else None,
        ).with_transient_faults(DEMO_FAULT_RATE, hangs=False)
    # The simulators first: a busy port is said before anything is written.
    with running_simulators(config, settings):
        defs = build_definitions(config)
        instance = get_instance()  # set up DAGSTER_HOME once, before the worker processes share it
        print(f"data directory: {data_dir()}", file=out)
        if switch:
            print(f"{config.platforms[0].name} switches to the model {switch[1]} on {switch[0]}"
                  " (the model-change canary should flag that day)", file=out)
        print(f"simulating {len(config.platforms)} platforms, {len(dates)} day(s): {dates[0]} .. {dates[-1]}",
              file=out, flush=True)
        catalog_run = run_job(defs, catalog_job.name, instance)
        print(f"brand catalog {config.catalog.version}: {len(config.brands)} brands"
              f" {'loaded' if catalog_run.success else 'FAILED'}", file=out, flush=True)
        runs = []
        # The slowest platform's run first, with a head start where the others can spare it: its
        # first request then goes out before their starts take the two cores.
        bounds = platform_bounds_s(config)
        platforms, head_start = sorted(bounds, key=bounds.get, reverse=True), head_start_s(bounds)
        for day in dates:
            keys = [(day, platform) for platform in platforms]
            runs += materialize_partitions(config.directory, keys, run_config=QUIET_RUN,
                                           on_done=lambda run: _progress(run, out), head_start_s=head_start)
    try:
        report_failed_runs(instance, [run.run_id for run in runs if not run.success and run.run_id], config)
    except Exception as exc:
        full = as_disk_full(exc)
        if full is None:
            raise
        print(f"the failed runs' faults were not stored: {full}", file=out)
    order = {platform.name: index for index, platform in enumerate(config.platforms)}
    print_summary(sorted(runs, key=lambda run: (run.date, order.get(run.platform, 0))), out)
    print_judge_summary(config, runs, out)
    report_path, report_ok = report_or_why(defs, instance)
    bound, slowest = rate_bound_s(config, len(dates))
    print(f"wall time: {time.monotonic() - started:.1f} s (rate bound {bound:.1f} s: {slowest}'s requests at its"
          " permitted rate, day after day)", file=out)
    print(f"report: {report_path}", file=out)
    print("workspace: `visibility users add NAME --role analyst`, then `visibility serve` and open"
          " http://127.0.0.1:8080", file=out)
    return 0 if report_ok and all(r.success for r in runs) else 1


def report_or_why(defs, instance) -> tuple[str, bool]:
    """The report's path, or why it failed (a full disk said once, not as a traceback)."""
    from visibility_assets.operate.automation import report_job
    from visibility_assets.operate.failed_runs import failure_of_run
    from visibility_assets.partition_run import materialization_metadata, run_job

    try:
        report = run_job(defs, report_job.name, instance)
    except Exception as exc:
        full = as_disk_full(exc)
        if full is None:
            raise
        return f"FAILED: {full}", False
    if not report.success:
        return f"FAILED: {failure_of_run(instance, report.run_id)[1]}", False
    return materialization_metadata(report).get("visibility_report", {}).get("path"), True


def platform_bounds_s(config: VisibilityConfig) -> dict[str, float]:
    """The least time each platform's night can take: its nightly requests at its rate_limit_rps.
    A platform whose search is a tool loop (Kimi's $web_search) sends at least two requests per
    answer: the question, then the tool's result."""
    answers = len(config.questions) + len(config.canaries)
    return {p.name: answers * p.rounds * requests_per_answer(p) / p.rate_limit_rps for p in config.platforms}


def head_start_s(bounds: dict[str, float]) -> float:
    """How long the slowest platform's run starts before the others: up to HEAD_START_S, at most
    half of what the next slowest can spare."""
    ordered = sorted(bounds.values(), reverse=True)
    return min(HEAD_START_S, (ordered[0] - ordered[1]) / 2) if len(ordered) > 1 else 0.0


def rate_bound_s(config: VisibilityConfig, days: int) -> tuple[float, str]:
    """The least time the collection can take: the slowest platform's night, for each day (the
    days run one after another, the platforms side by side)."""
    per_platform = platform_bounds_s(config)
    slowest = max(per_platform, key=per_platform.get)
    return per_platform[slowest] * days, slowest


def demo_model_switch(config: VisibilityConfig, dates: list[str]) -> tuple[str, str] | None:
    """Over several days, the first platform silently changes its model on the last one."""
    if len(dates) < 2 or not config.platforms:
        return None
    return dates[-1], config.platforms[0].model + "-next"


def _progress(run, out) -> None:
    stored = run.metadata.get("raw_ai_responses", {}).get("answers_stored", 0)
    valid = run.metadata.get("cleaned_samples", {}).get("valid", 0)
    state = "done" if run.success else f"FAILED ({run.error})"
    print(f"  {run.date} {run.platform:<10} {state}: {stored} answers, {valid} valid", file=out, flush=True)


def print_summary(runs: list, out) -> None:
    print(f"\n{'date':<11} {'platform':<10} {'answers':>7} {'failed':>6} {'retries':>7} "
          f"{'p50 ms':>7} {'p95 ms':>7} {'valid':>6} {'mentions':>8} {'moderated':>9} {'searches':>8} "
          f"{'cost':>9}  status", file=out)
    for run in runs:
        meta = _over_all_runs(run.metadata.get("raw_ai_responses", {}))
        cleaned = run.metadata.get("cleaned_samples", {})
        retries = meta.get("retries", meta.get("http_attempts", 0) - meta.get("sent", 0)) if meta else 0
        status = "ok" if run.success else f"FAILED ({run.fault_class or 'unknown'} fault): {run.error}"
        print(f"{run.date:<11} {run.platform:<10} {meta.get('answers_stored', '-'):>7} "
              f"{meta.get('failed', '-'):>6} {retries:>7} {_fmt(meta.get('latency_p50_ms')):>7} "
              f"{_fmt(meta.get('latency_p95_ms')):>7} {cleaned.get('valid', '-'):>6} "
              f"{cleaned.get('accepted_mentions', '-'):>8} {meta.get('moderated', '-'):>9} "
              f"{meta.get('searches', '-'):>8} {_cost(meta):>9}  {status}", file=out)


def _over_all_runs(meta: dict) -> dict:
    """The partition's figures over all its runs and step attempts (partition_*), where the run
    has them, in place of its own: a resumed partition's answers were paid for by earlier runs."""
    prefix = "partition_"
    return {**meta, **{key[len(prefix):]: value for key, value in meta.items() if key.startswith(prefix)}}


def print_judge_summary(config: VisibilityConfig, runs: list, out) -> None:
    """The judge's figures over the runs (judge.yaml): answers judged, invalid, unsent, its cost."""
    if config.judge is None:
        return
    metas = [run.metadata.get("judge_verdicts", {}) for run in runs]
    totals = {key: sum(m.get(key) or 0 for m in metas) for key in ("judged", "invalid", "unsent", "requests_sent")}
    costs = [m["cost"] for m in metas if m.get("cost") is not None]
    currency = next((m["currency"] for m in metas if m.get("currency")), "")
    cost = f"{sum(costs):.4f} {currency}".strip() if costs else "-"
    stopped = [s for m in metas for s in (m.get("stopped") or [])]
    print(f"judge {config.judge.platform}: {totals['judged']} answers judged, {totals['invalid']} invalid,"
          f" {totals['unsent']} unsent; {totals['requests_sent']} requests sent, cost {cost}", file=out)
    for reason in dict.fromkeys(stopped):
        print(f"  judge stopped: {reason}", file=out)


def _cost(meta: dict) -> str:
    cost = meta.get("cost")
    return "-" if cost is None else f"{cost:.4f} {meta.get('currency', '')}".strip()


def _fmt(value) -> str:
    return "-" if value is None else f"{value:.0f}"
