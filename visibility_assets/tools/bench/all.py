"""`visibility bench all`: the benchmarks at a size that takes a few minutes, each in a process
of its own, and one JSON object of the ratios that guard them (docs/architecture.md, "Performance").

Ratios, not seconds: this machine and the next differ, but a ratio that gets worse by more
than 10% after a change is that change's to explain.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time

# Each benchmark and its arguments at the size `bench all` runs it.
RUNS = {
    "clean": ["clean", "--answers", "5000", "--aliases", "1000"],
    "metrics": ["metrics", "--days", "30"],
    "collect": ["collect", "--platforms", "6", "--requests", "1200", "--rps", "20", "--fault-rate", "0.1"],
    "reanalysis": ["reanalysis", "--days", "7"],
    "night": ["night", "--scale", "1"],
    "history": ["history", "--days", "10", "--samples", "8"],
}


def run_one(arguments: list[str]) -> dict:
    completed = subprocess.run([sys.executable, "-m", "visibility_assets.cli", "bench", *arguments],
                               capture_output=True, text=True)
    lines = completed.stdout.strip().splitlines()
    if completed.returncode != 0 or not lines:
        raise RuntimeError(f"bench {' '.join(arguments)} exited {completed.returncode}: {completed.stderr[-2000:]}")
    return json.loads(lines[-1])


def ratios(figures: dict[str, dict]) -> dict[str, float | None]:
    """The figures a change must not make worse (each: higher is better)."""
    clean, metrics, collect = figures["clean"], figures["metrics"], figures["collect"]
    reanalysis, night, history = figures["reanalysis"], figures["night"], figures["history"]
    reanalysed_per_s = reanalysis["samples_reanalysed"] / reanalysis["wall_s"] if reanalysis["wall_s"] else 0.0
    return {
        "analyzer_share_of_matching": clean["analyzer_share_of_matching"],
        "analyzer_speedup_over_naive": clean["speedup"],
        "metrics_sql_share_of_wall": round(metrics["models_sql_s"] / metrics["wall_s"], 3),
        "collect_rate_ratio": collect["rate_ratio"],
        "reanalysis_share_of_analyzer_speed": round(reanalysed_per_s / clean["answers_per_s"], 3),
        "demo_rate_bound_over_wall": round(night["rate_bound_s"] / night["wall_s"], 3),
        "history_first_over_last_night": round(history["first_night_s"] / history["last_night_s"], 3),
        "history_300ms_over_slowest_view_p95": round(300 / history["serve_p95_ms"], 3),
    }


def run_all_benches(progress=lambda message: print(message, file=sys.stderr)) -> dict:
    figures, seconds = {}, {}
    for name, arguments in RUNS.items():
        progress(f"bench all: {' '.join(arguments)}")
        started = time.monotonic()
        figures[name] = run_one(arguments)
        seconds[name] = round(time.monotonic() - started, 1)
    return {"ratios": ratios(figures), "runs": {name: " ".join(args) for name, args in RUNS.items()},
            "seconds": seconds, "figures": {name: {k: v for k, v in f.items() if k != "definition"}
                                            for name, f in figures.items()},
            "definition": "ratios, each higher-is-better: analyzer_share_of_matching and analyzer_speedup_over_naive"
                          " (bench clean); metrics_sql_share_of_wall: models_sql_s / wall_s (bench metrics);"
                          " collect_rate_ratio (bench collect); reanalysis_share_of_analyzer_speed: answers"
                          " re-analysed per second end to end over the analyzer's answers per second;"
                          " demo_rate_bound_over_wall: the demo's rate bound over its wall time (bench night"
                          " --scale 1); history_first_over_last_night: bench history's first night over its last"
                          " (wall); history_300ms_over_slowest_view_p95: 300 ms over the slowest view's p95 there"}
