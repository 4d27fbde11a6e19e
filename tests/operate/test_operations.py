"""Nightly schedule, re-analysis backfill (asks no platform) and provenance, for real."""

import os
from datetime import datetime, timezone

import pytest
from dagster import AssetKey, build_schedule_context

from tests.cli import visibility
from tests.pipeline import materialize_for, pipeline, read_warehouse, resources
from visibility_assets.clean.analyzer import ANALYZER_VERSION
from visibility_assets.operate.automation import analysis_version
from visibility_assets.operate.instance import get_instance

DAY = "2026-11-07"


def test_nightly_schedule_asks_yesterday_of_every_platform_with_partition_tags_and_deadline():
    context = build_schedule_context(scheduled_execution_time=datetime(2026, 11, 30, 18, 0, tzinfo=timezone.utc))
    nightly_collection = pipeline().resolve_schedule_def("nightly_collection")
    requests = list(nightly_collection(context))  # 02:00 on Dec 1 in Shanghai
    assert [r.tags["dagster/partition/platform"] for r in requests] == ["deepseek", "qwen", "ernie", "hunyuan",
                                                                          "doubao", "kimi"]
    assert {r.tags["dagster/partition/date"] for r in requests} == {"2026-11-30"}
    assert all(r.partition_key == f"2026-11-30|{r.tags['dagster/partition/platform']}" for r in requests)
    assert requests[0].run_config["ops"]["raw_ai_responses"]["config"]["deadline"] == "06:00"
    assert nightly_collection.execution_timezone == "Asia/Shanghai" and nightly_collection.cron_schedule == "0 2 * * *"
    assert nightly_collection.job_name == "nightly_platform_job"
    selected = pipeline().resolve_job_def("nightly_platform_job").asset_layer.selected_asset_keys
    assert AssetKey("raw_ai_responses") in selected and AssetKey("fct_visibility_alerts") in selected
    assert AssetKey("visibility_report") not in selected  # the report waits for every platform
    assert AssetKey("visibility_alerts") not in selected  # a view: the runner keeps it current


@pytest.mark.dagster
def test_backfill_after_an_alias_change_reanalyses_history_and_sends_nothing(visibility_home, config_dir, simulated):
    """A new alias of 阿里云 that the stored answers already contain is counted after the backfill."""
    from visibility_assets.config import load_config

    def query(sql):
        with read_warehouse() as conn:
            return conn.execute(sql).fetchall()

    for platform in ("deepseek", "qwen"):
        assert materialize_for(["mention_metrics"], DAY, platform).success
    received = simulated.app.stats_json()
    attempts_before = query("SELECT count(*) FROM http_attempts")
    raw_before = query("SELECT request_key, content_hash, run_id FROM raw_ai_responses ORDER BY 1")
    new_alias = "老牌厂商"  # a phrase of the simulated answers, not an alias until now
    assert query(f"SELECT count(*) FROM raw_ai_responses WHERE category = 'cloud' AND answer_text LIKE '%{new_alias}%'")[0][0]
    assert not query(f"SELECT count(*) FROM entity_matches WHERE alias = '{new_alias}'")[0][0]
    mentions_before = query("SELECT sum(mention_count) FROM sample_brand_results WHERE brand = '阿里云'")[0][0]
    metrics_runs_before = query("SELECT DISTINCT run_id FROM mention_metrics")
    old_version = query("SELECT DISTINCT config_version FROM mention_metrics")[0][0]
    snapshot_before = query("FROM lake.current_snapshot()")[0][0]

    brands = config_dir / "brands.yaml"
    brands.write_text(brands.read_text(encoding="utf-8").replace("aliases: [阿里云", f"aliases: [阿里云, {new_alias}", 1),
                      encoding="utf-8")
    result = visibility("backfill", "--since", DAY, "--until", DAY, "--platform", "deepseek", "--platform", "qwen")
    assert result.returncode == 0, result.stdout + result.stderr
    assert "deepseek   ok" in result.stdout and "qwen       ok" in result.stdout

    # Zero requests to any platform: none reached the simulated ones, none was even tried.
    assert simulated.app.stats_json() == received and query("SELECT count(*) FROM http_attempts") == attempts_before
    assert query("SELECT request_key, content_hash, run_id FROM raw_ai_responses ORDER BY 1") == raw_before
    assert query(f"SELECT count(*) FROM entity_matches WHERE alias = '{new_alias}' AND accepted")[0][0] > 0
    assert query("SELECT sum(mention_count) FROM sample_brand_results WHERE brand = '阿里云'")[0][0] > mentions_before
    assert not set(query("SELECT DISTINCT run_id FROM mention_metrics")) & set(metrics_runs_before)  # recomputed
    version = load_config().catalog.version
    assert query("SELECT DISTINCT config_version FROM cleaned_samples") == [(version,)]
    assert query("SELECT DISTINCT config_version FROM mention_metrics") == [(version,)]

    # The metrics as they were before the alias change, from the lake's snapshot of then.
    explained = {as_of: visibility("explain", "--date", DAY, "--platform", "deepseek", "--brand", "阿里云", *as_of)
                 for as_of in ((), ("--as-of", str(snapshot_before)))}
    now, then = explained[()], explained[("--as-of", str(snapshot_before))]
    assert now.returncode == then.returncode == 0, now.stderr + then.stderr
    assert f"config {version}" in now.stdout and f"config {old_version}" in then.stdout
    assert f"as of {snapshot_before}" in then.stdout and old_version != version


@pytest.mark.dagster
def test_explain_traces_a_metric_row_to_raw_answers_and_http_attempts(visibility_home, config_dir, simulated):
    assert materialize_for(["mention_metrics"], DAY, "kimi").success
    with read_warehouse() as conn:
        brand = conn.execute("SELECT brand FROM mention_metrics WHERE mentioned_answers > 0 LIMIT 1").fetchall()[0][0]
    result = visibility("explain", "--date", DAY, "--platform", "kimi", "--brand", brand, "--limit", "2")
    assert result.returncode == 0, result.stderr
    for part in (f"mention_metrics {DAY} kimi {brand}", "config ", f"analyzer {ANALYZER_VERSION}", "sample ", "match ",
                 "raw answer ", "http attempt #1: 200"):
        assert part in result.stdout
    missing = visibility("explain", "--date", DAY, "--platform", "kimi", "--brand", "NoSuchBrand")
    assert missing.returncode == 2 and "no metric row" in missing.stderr and "Traceback" not in missing.stderr


def test_catalog_change_sensor_requests_a_reanalysis_per_platform_and_never_raw(visibility_home, config_dir):
    from dagster import build_sensor_context

    from visibility_assets.config import load_config

    instance = get_instance()
    catalog_change_sensor = pipeline().resolve_sensor_def("catalog_change_sensor")
    resources_ = resources()

    def tick(cursor):
        return catalog_change_sensor(build_sensor_context(instance=instance, cursor=cursor, resources=resources_))

    first = tick(None)
    assert not first.run_requests and first.cursor == analysis_version(load_config())
    unchanged = tick(first.cursor)
    assert "unchanged" in str(unchanged)

    brands = config_dir / "brands.yaml"
    brands.write_text(brands.read_text(encoding="utf-8").replace("aliases: [阿里云", "aliases: [阿里云, 阿里云计算", 1),
                      encoding="utf-8")
    changed = tick(first.cursor)
    assert changed.cursor == analysis_version(load_config()) != first.cursor
    catalog_run, *platform_runs = changed.run_requests
    assert catalog_run.job_name == "catalog_job"
    assert [r.tags["visibility/platform"] for r in platform_runs] == load_config().platform_names
    reanalysis = pipeline().resolve_job_def("reanalysis_job").asset_layer.selected_asset_keys
    assert AssetKey("cleaned_samples") in reanalysis and AssetKey("raw_ai_responses") not in reanalysis
    for run in platform_runs:
        assert run.job_name == "reanalysis_job"
        start, end = run.tags["dagster/asset_partition_range_start"], run.tags["dagster/asset_partition_range_end"]
        assert start.endswith("|" + run.tags["visibility/platform"]) and end.endswith("|" + run.tags["visibility/platform"])


@pytest.mark.dagster
def test_a_backfill_whose_reanalysis_fails_says_why_and_exits_non_zero(visibility_home, config_dir, simulated):
    """deepseek's raw answers lost from the lake (their file deleted): its re-analysis fails, and the
    command says so with the run's reason and fault class, not a traceback."""
    import duckdb

    for platform in ("deepseek", "qwen"):
        assert materialize_for(["mention_metrics"], DAY, platform).success
    with read_warehouse() as conn:
        files = [path for (path,) in conn.execute("SELECT data_file FROM ducklake_list_files('lake', 'raw_ai_responses')")
                 .fetchall()]
    lost = [path for path in files
            if duckdb.sql("SELECT count(*) FROM read_parquet($path) WHERE platform = 'deepseek'",
                          params={"path": path}).fetchone()[0]]
    assert lost and len(lost) < len(files)
    for path in lost:
        os.remove(path)
    result = visibility("backfill", "--since", DAY, "--until", DAY, "--platform", "deepseek", "--platform", "qwen")
    assert result.returncode == 1, result.stdout + result.stderr
    failed = next(line for line in result.stdout.splitlines() if line.strip().startswith("deepseek"))
    assert "FAILED" in failed and " fault)" in failed, failed
    assert "Traceback" not in result.stderr, result.stderr
