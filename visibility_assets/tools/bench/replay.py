"""`visibility bench replay`: `visibility replay` over N stored answers, as it would run before
an analyzer upgrade switches: once with the analyzer unchanged (every result must match) and
once with a deliberately changed rule (a diff share to report).

The warehouse is built as collection and cleaning build it: raw answers from the simulator's
answer generator (tools/bench/reanalysis.py), cleaned by the real cleaner (clean/defs.py).
"""

from __future__ import annotations

import math
import sys
import time

from visibility_assets.clean.analyzer import Analysis, Analyzer
from visibility_assets.clean.samples import SampleCleaner
from visibility_assets.config import BrandCatalog
from visibility_assets.tools.bench import scratch_home
from visibility_assets.tools.bench.reanalysis import seed_raw_answers

CHANGED_RANK_LIMIT = 3

# Keep the newest N answers of the seeded days: whole days, the last one cut short.
TRIM_TO = """
DELETE FROM raw_ai_responses WHERE request_key NOT IN (
    SELECT request_key FROM raw_ai_responses ORDER BY date DESC, platform, question_id, round LIMIT $answers)
"""


class TopRanksAnalyzer(Analyzer):
    """The deliberate rule change: a list rank past `rank_limit` is not recorded."""

    rank_limit = CHANGED_RANK_LIMIT

    def analyze(self, answer: str, question: str, category: str) -> Analysis:
        analysis = super().analyze(answer, question, category)
        for result in analysis.mentioned.values():
            if result.list_rank is not None and result.list_rank > self.rank_limit:
                result.list_rank = None
        return analysis


class TopRanksCleaner(SampleCleaner):
    def __init__(self, catalog: BrandCatalog, run_id: str = "replay-bench"):
        super().__init__(catalog, run_id)
        self.analyzer = TopRanksAnalyzer(catalog)


def seed_cleaned_answers(config, answers: int) -> int:
    """N raw answers in the warehouse of the current data directory, cleaned; returns N stored."""
    from visibility_assets.clean.defs import clean_partitions
    from visibility_assets.core.partitions import Partition
    from visibility_assets.warehouse.lake import lake_settings, reading, write_with_retry
    from visibility_assets.warehouse.resource import WarehouseResource

    per_day = sum(len(config.questions) * p.rounds for p in config.platforms)
    seed_raw_answers(config, math.ceil(answers / per_day))
    settings = lake_settings()
    write_with_retry(settings, lambda conn: conn.execute(TRIM_TO, {"answers": answers}))
    with reading(settings) as conn:
        partitions = [Partition(day, platform) for day, platform in conn.execute(
            "SELECT DISTINCT date, platform FROM raw_ai_responses ORDER BY 1, 2").fetchall()]
    clean_partitions(partitions, config.catalog, WarehouseResource.from_settings(settings), "bench-seed")
    with reading(settings) as conn:
        return conn.execute("SELECT count(*) FROM cleaned_samples").fetchone()[0]


def timed_replay(catalog: BrandCatalog, factory) -> tuple[object, float]:
    from visibility_assets.clean.replay import replay
    from visibility_assets.warehouse.lake import lake_settings, reading

    with reading(lake_settings()) as conn:
        started = time.perf_counter()
        report = replay(conn, catalog, None, None, factory)
        return report, time.perf_counter() - started


def run_replay_bench(answers: int = 20000, progress=lambda message: print(message, file=sys.stderr)) -> dict:
    with scratch_home("bench-replay-"):
        from visibility_assets.clean.replay import current_cleaner
        from visibility_assets.clean.replay_record import record_replay
        from visibility_assets.config import load_config
        from visibility_assets.warehouse.lake import lake_settings

        config = load_config()
        started = time.perf_counter()
        stored = seed_cleaned_answers(config, answers)
        progress(f"bench replay: {stored} stored answers, cleaned, in {time.perf_counter() - started:.1f} s")
        unchanged, wall = timed_replay(config.catalog, current_cleaner)
        progress(f"bench replay: unchanged analyzer, {unchanged.total.answers} answers in {wall:.2f} s,"
                 f" {unchanged.total.changed} changed")
        changed, wall_changed = timed_replay(config.catalog, TopRanksCleaner)
        progress(f"bench replay: ranks past {CHANGED_RANK_LIMIT} dropped, {changed.total.changed} changed"
                 f" in {wall_changed:.2f} s")
        recording = time.perf_counter()
        rows = record_replay(lake_settings(), changed)
        record_s = time.perf_counter() - recording
    return {"answers": unchanged.total.answers, "stored_answers": stored, "wall_s": round(wall, 2),
            "answers_per_s": round(unchanged.total.answers / wall),
            "timings_s": {name: round(s, 2) for name, s in unchanged.timings.items()},
            "changed_unchanged": unchanged.total.changed, "diff_share_unchanged": unchanged.total.diff_share,
            "diff_share_changed": round(changed.total.diff_share or 0.0, 4),
            "changed_by_field_changed": changed.total.by_field(), "wall_s_changed": round(wall_changed, 2),
            "record_rows": rows, "record_s": round(record_s, 2),
            "definition": "wall_s: replay() over every stored answer (one read query, the real cleaner in"
                          " memory, the comparison), analyzer unchanged; the changed run drops list ranks past "
                          f"{CHANGED_RANK_LIMIT}; record_s: its analyzer_replays rows in one transaction"}
