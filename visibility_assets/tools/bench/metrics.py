"""`visibility bench metrics`: recompute every metric partition of D days x K platforms in one
single-run backfill, over synthetic cleaned samples, in a scratch data directory."""

from __future__ import annotations

import sys
import time
from datetime import timedelta

import duckdb

from visibility_assets.clean.analyzer import ANALYZER_VERSION
from visibility_assets.tools.bench import LAST_DAY, scratch_home
from visibility_assets.tools.simulator.answers import KNOWN_PLATFORMS
from visibility_assets.warehouse.db import ensure_table
from visibility_assets.warehouse.tables import CLEANED_SAMPLES, SAMPLE_BRAND_RESULTS

BRANDS_PER_CATEGORY = 8
CATEGORIES = ("cloud", "phone", "crm", "ev", "workspace")

# Deterministic pseudo-random samples: hash() of the keys stands in for a random draw.
GENERATE_SAMPLES = """
INSERT INTO cleaned_samples BY NAME
SELECT md5(d::VARCHAR || p || i::VARCHAR) AS request_key, d AS date, p AS platform,
       'q' || (i % 45)::VARCHAR AS question_id, $categories[1 + i % len($categories)] AS category,
       1 + i // 45 AS round, 'completed' AS state, hash(d, p, i) % 100 >= 8 AS valid,
       CASE WHEN hash(d, p, i) % 100 < 8 THEN ['refusal', 'error', 'empty', 'irrelevant'][CAST(1 + hash(i, p) % 4 AS INTEGER)] END
           AS invalid_reason,
       0 AS brands_mentioned, NULL AS option_list_kind, [] AS citations, hash(p, i, d) % 3 = 0 AS has_citation,
       $analyzer_version AS analyzer_version, 'bench' AS config_version, 'bench' AS run_id, now() AS cleaned_at
FROM range($first, $last + INTERVAL 1 DAY, INTERVAL 1 DAY) AS days(d), unnest($platforms) AS platforms(p),
     range($per_partition) AS answers(i)
ORDER BY d, p
"""
GENERATE_BRAND_RESULTS = """
INSERT INTO sample_brand_results BY NAME
SELECT s.request_key, s.date, s.platform, s.category, s.category || '-brand-' || b::VARCHAR AS brand,
       s.valid, s.has_citation,
       s.valid AND hash(s.request_key, b) % 100 < 20 + 7 * b AS mentioned,
       CASE WHEN s.valid AND hash(s.request_key, b) % 100 < 20 + 7 * b THEN 1 + hash(b, s.request_key) % 3 ELSE 0 END
           AS mention_count,
       NULL AS first_mention_order,
       CASE WHEN s.valid AND hash(s.request_key, b) % 100 < 20 + 5 * b THEN 1 + (hash(s.request_key) + b) % 6 END
           AS list_rank,
       CASE WHEN s.valid AND hash(s.request_key, b) % 100 < 20 + 7 * b THEN hash(b, s.date) % 10 <> 0 END
           AS recommended,
       s.has_citation AND hash(s.request_key, b, 7) % 4 = 0 AS cites_own_domain,
       CASE WHEN s.valid AND hash(s.request_key, b) % 100 < 20 + 7 * b  -- a named brand has a label, as cleaned
            THEN ['positive', 'neutral', 'negative'][CAST(1 + hash(b, s.request_key, 3) % 3 AS INTEGER)] END AS sentiment
FROM cleaned_samples AS s, range($brands) AS brands(b)
ORDER BY s.date, s.platform  -- as nightly runs append them: partition after partition
"""


def seed_warehouse(days: int, per_partition: int, platforms: tuple[str, ...]) -> int:
    from visibility_assets.warehouse.lake import lake_settings, write_with_retry

    def seed(conn: duckdb.DuckDBPyConnection) -> int:
        for table in (CLEANED_SAMPLES, SAMPLE_BRAND_RESULTS):
            ensure_table(conn, table)
        first = LAST_DAY - timedelta(days=days - 1)
        conn.execute(GENERATE_SAMPLES, {"first": first, "last": LAST_DAY, "platforms": list(platforms),
                                        "per_partition": per_partition, "categories": list(CATEGORIES),
                                        "analyzer_version": ANALYZER_VERSION})
        conn.execute(GENERATE_BRAND_RESULTS, {"brands": BRANDS_PER_CATEGORY})
        return conn.execute("SELECT count(*) FROM cleaned_samples").fetchall()[0][0]

    return write_with_retry(lake_settings(), seed)[0]


def run_metrics_bench(days: int = 90, platforms: int = 6, per_partition: int = 200, instance_kind: str = "sqlite",
                      progress=lambda message: print(message, file=sys.stderr)) -> dict:
    """instance_kind: "sqlite" (the default instance: SQLite files), "postgres" (the production
    instance config, operate/instance/dagster.postgres.yaml, against $VISIBILITY_PG_URL or the local server)
    or "memory" (Dagster's ephemeral instance: the SQL and Dagster's step overhead alone)."""
    with scratch_home("bench-metrics-"):
        return build_metrics_warehouse(days, KNOWN_PLATFORMS[:platforms], per_partition, instance_kind, progress)


def build_metrics_warehouse(days: int, names: tuple[str, ...], per_partition: int, instance_kind: str = "sqlite",
                            progress=lambda message: print(message, file=sys.stderr)) -> dict:
    """Synthetic cleaned samples of D days x the platforms in the current data directory, and
    every metric partition computed from them in one single-run backfill (the figures of
    `bench metrics`; `bench serve` serves the warehouse it leaves)."""
    from dagster import DagsterInstance, materialize

    from visibility_assets.config import load_config
    from visibility_assets.core.partitions import daily_platform_partitions, partition_key
    from visibility_assets.definitions import build_resources
    from visibility_assets.measure.defs import build_sql_assets
    from visibility_assets.operate.automation import RANGE_END, RANGE_START
    from visibility_assets.operate.instance import get_instance, planned_events_as_subsets
    from visibility_assets.partition_run import QUIET_RUN
    from visibility_assets.warehouse.lake import lake_settings, reading

    answers = seed_warehouse(days, per_partition, names)
    progress(f"bench metrics: {answers} answers over {days} days x {len(names)} platforms")
    first = (LAST_DAY - timedelta(days=days - 1)).isoformat()
    started = time.perf_counter()
    instance = DagsterInstance.ephemeral() if instance_kind == "memory" else get_instance(instance_kind)
    with planned_events_as_subsets():  # as `visibility backfill` creates its range runs
        result = materialize(
            build_sql_assets(daily_platform_partitions(names)), instance=instance,
            resources=build_resources(load_config()), raise_on_error=False,
            tags={RANGE_START: str(partition_key(first, names[0])),
                  RANGE_END: str(partition_key(LAST_DAY.isoformat(), names[-1]))},
            run_config=QUIET_RUN,
        )
    wall = time.perf_counter() - started
    sql_s = models_sql_s(names, first)
    with reading(lake_settings()) as conn:
        metric_rows = conn.execute("SELECT count(*) FROM mention_metrics").fetchall()[0][0]
        alerts = conn.execute("SELECT count(*) FROM visibility_alerts").fetchall()[0][0]
    failed_checks = [e.check_name for e in result.get_asset_check_evaluations() if not e.passed]
    return {"days": days, "platforms": len(names), "partitions": days * len(names), "answers": answers,
            "instance": instance_kind,
            "success": result.success, "wall_s": round(wall, 2), "models_sql_s": round(sql_s, 2),
            "orchestration_share": round(max(0.0, 1 - sql_s / wall), 3) if wall else None,
            "metric_rows": metric_rows, "alerts": alerts, "failed_checks": failed_checks,
            "definition": "wall_s: one Dagster run (single-run backfill over the whole partition range) of every"
                          " SQL model and its checks, in-process executor, created as `visibility backfill` creates"
                          " its runs (planned events as partition subsets; asset events in batches); models_sql_s:"
                          " the same models and tests built again over the same partitions straight through the"
                          " runner, no Dagster (two lake transactions a model); orchestration_share: 1 -"
                          " models_sql_s / wall_s"}


def models_sql_s(names: tuple[str, ...], first: str) -> float:
    """Every model and its tests over every partition, through the runner alone."""
    from datetime import date

    from visibility_assets.core.partitions import Partition
    from visibility_assets.measure.project import load_project
    from visibility_assets.measure.runner import materialize_model
    from visibility_assets.warehouse.lake import lake_settings
    from visibility_assets.warehouse.resource import WarehouseResource

    warehouse = WarehouseResource.from_settings(lake_settings())
    day, partitions = date.fromisoformat(first), []
    while day <= LAST_DAY:
        partitions += [Partition(day, name) for name in names]
        day += timedelta(days=1)
    project = load_project()
    started = time.perf_counter()
    for model in project.models.values():
        materialize_model(warehouse, project, model, partitions if model.partitioned else [], "bench-sql-alone")
    return time.perf_counter() - started
