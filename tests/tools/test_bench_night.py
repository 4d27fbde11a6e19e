"""`visibility bench night` and `bench all`: the scaled night's config, the process-tree figures
and the ratios `bench all` prints."""

import subprocess
import sys
import time

import pytest

from visibility_assets.config import load_config
from visibility_assets.tools.bench.all import RUNS, ratios
from visibility_assets.tools.bench.night import ProcessTree, scaled_config_dir
from visibility_assets.tools.demo import rate_bound_s


def test_the_tenfold_night_asks_ten_wordings_of_each_question_at_five_times_the_rate(tmp_path):
    example = load_config()
    scaled = load_config(scaled_config_dir(tmp_path / "config", 10))
    assert len(scaled.questions) == 10 * len(example.questions) == 450
    assert len({q.id for q in scaled.questions}) == 450 and len({q.text for q in scaled.questions}) == 450
    assert all(p.rate_limit_rps == 5 * e.rate_limit_rps and p.max_concurrency == 5 * e.max_concurrency
               for p, e in zip(scaled.platforms, example.platforms))
    answers = (len(scaled.questions) + len(scaled.canaries)) * sum(p.rounds for p in scaled.platforms)
    assert answers == 8208
    bound, slowest = rate_bound_s(scaled, 1)
    assert slowest == "kimi" and round(bound, 1) == 54.7  # (450 + 6) x 3 answers, two requests each, at 50 rps


@pytest.mark.slow  # over a second by design
def test_the_process_tree_counts_a_childs_cpu_and_memory():
    with ProcessTree(interval_s=0.05) as tree:
        # 0.6 s of the child's own CPU, not of the wall clock: on a busy machine a 0.6 s wall loop
        # got 0.17 s of CPU (a CI run); the wall bound only stops a child that gets none.
        child = subprocess.Popen([sys.executable, "-c", "import time\nend = time.time() + 30\n"
                                  "data = bytearray(64 * 2**20)\n"
                                  "while time.process_time() < 0.6 and time.time() < end: pass"])
        child.wait()
        time.sleep(0.1)
    assert tree.cpu_s >= 0.3  # the child's busy loop, read while it ran
    assert tree.peak_pss_bytes >= 64 * 2**20


def test_bench_all_guards_ratios_that_are_higher_when_better():
    figures = {
        "clean": {"analyzer_share_of_matching": 0.25, "speedup": 3.0, "answers_per_s": 9000.0},
        "metrics": {"models_sql_s": 1.5, "wall_s": 3.0},
        "collect": {"rate_ratio": 0.96},
        "reanalysis": {"samples_reanalysed": 900, "wall_s": 2.0},
        "night": {"rate_bound_s": 30.6, "wall_s": 40.0},
        "history": {"first_night_s": 20.0, "last_night_s": 25.0, "serve_p95_ms": 200.0},
    }
    assert ratios(figures) == {
        "analyzer_share_of_matching": 0.25, "analyzer_speedup_over_naive": 3.0, "metrics_sql_share_of_wall": 0.5,
        "collect_rate_ratio": 0.96, "reanalysis_share_of_analyzer_speed": 0.05, "demo_rate_bound_over_wall": 0.765,
        "history_first_over_last_night": 0.8, "history_300ms_over_slowest_view_p95": 1.5,
    }
    assert set(RUNS) == set(figures)
