"""`visibility bench ...` print one JSON object as the last stdout line."""

import json
import subprocess
import sys

import pytest

pytestmark = pytest.mark.system


def _bench(*args, timeout_s: float = 300) -> dict:
    result = subprocess.run([sys.executable, "-m", "visibility_assets.cli", "bench", *args],
                            capture_output=True, text=True, timeout=timeout_s)
    assert result.returncode == 0, result.stderr[-2000:]
    return json.loads(result.stdout.strip().splitlines()[-1])


def test_bench_collect_reports_rate_duplicates_and_success():
    # A client timeout of 1.5 s: at 0.5 s a loaded CI machine timed out answers the simulator had
    # already written, and their retries counted as answered twice (stored once: "stored" is 120).
    figures = _bench("collect", "--platforms", "2", "--requests", "120", "--rps", "40",
                     "--fault-rate", "0.1", "--timeout", "1.5")
    for key in ("requests", "succeeded", "failed", "duplicates", "wall_s", "permitted_rps", "achieved_rps",
                "rate_ratio", "http_429", "retries"):
        assert key in figures
    assert figures["requests"] == figures["succeeded"] == figures["stored"] == 120
    assert figures["duplicates"] == 0
    assert figures["permitted_rps"] == 80
    assert 0 < figures["rate_ratio"] <= 1.05


def test_bench_clean_times_the_analyzer_against_the_naive_loop_on_one_corpus():
    figures = _bench("clean", "--answers", "300", "--aliases", "600")
    for key in ("answers", "aliases", "answers_per_s", "baseline_answers_per_s", "speedup", "matching_speedup"):
        assert key in figures
    assert figures["answers"] == 300 and figures["aliases"] == 600
    assert figures["baseline_sample_answers"] == 300  # a small corpus is timed whole on both sides
    assert figures["accepted_mentions"] > 0
    assert abs(figures["speedup"] - figures["answers_per_s"] / figures["baseline_answers_per_s"]) <= 0.1
    share = figures["answers_per_s"] / figures["matching_answers_per_s"]
    assert abs(figures["analyzer_share_of_matching"] - share) <= 0.01
    assert set(figures["stage_shares"]) == {"normalize_scope", "matching", "rules", "structure", "validity",
                                            "recommendation", "sentiment", "citations"}
    assert abs(sum(figures["stage_shares"].values()) - 1) <= 0.01


def test_bench_metrics_runs_every_model_over_the_range_in_one_run():
    figures = _bench("metrics", "--days", "2", "--platforms", "2", "--answers-per-partition", "20", "--instance", "memory")
    assert figures["success"] and figures["failed_checks"] == []
    assert figures["partitions"] == 4 and figures["answers"] == 80 and figures["metric_rows"] > 0
    assert figures["wall_s"] > 0


def test_bench_reanalysis_reanalyses_every_stored_answer():
    figures = _bench("reanalysis", "--days", "1", "--platforms", "2")
    assert figures["success"]
    assert figures["samples_reanalysed"] == figures["answers"] > 0
    assert figures["partitions"] == figures["platforms"] == 2 and figures["metric_rows"] > 0


SERVED_VIEWS = ("overview", "competitors", "questions", "answers", "sources", "alerts", "review", "accuracy")


@pytest.mark.long
def test_bench_serve_times_every_view_and_endpoint_and_a_load_without_errors():
    figures = _bench("serve", "--days", "2", "--clients", "3", "--duration", "1", "--samples", "2")
    assert set(figures["endpoints"]) == {prefix + view for view in SERVED_VIEWS for prefix in ("/", "/api/")}
    assert all(e["n"] == 2 and 0 < e["p50_ms"] <= e["p95_ms"] for e in figures["endpoints"].values())
    assert figures["load"]["errors"] == 0 and figures["load"]["requests"] > 0


@pytest.mark.long
def test_bench_history_times_the_first_and_last_night_the_views_and_the_backfill():
    figures = _bench("history", "--days", "3", "--samples", "2", "--questions", "6", timeout_s=900)
    for key in ("days", "first_night_s", "last_night_s", "night_growth", "serve_p95_ms", "lake_files", "lake_mb",
                "backfill_s"):
        assert key in figures
    assert figures["days"] == 3 and figures["questions"] == 6
    assert figures["filled"]["nights"] == 1 and figures["filled"]["failed_checks"] == []
    assert figures["night_growth"] == round(figures["last_night_s"] / figures["first_night_s"], 3)
    assert set(figures["views"]) == {prefix + view for view in SERVED_VIEWS for prefix in ("/", "/api/")}
    assert figures["lake_files"] > 0 and figures["backfill_days"] == 3 and figures["backfill_s"] > 0
    assert figures["first_night_cpu_s"] > 0 and figures["dagster_mb_last_night"] > 0
