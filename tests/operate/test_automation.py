"""The definitions come from one config: its platforms are the partitions, the schedule's runs,
the report sensor's wait list; its folder is what the sensors and assets read."""

from datetime import datetime, timezone

import pytest
import yaml
from dagster import (
    AssetKey,
    DagsterInstance,
    DagsterRunStatus,
    RunRequest,
    SkipReason,
    build_schedule_context,
    build_sensor_context,
)

from visibility_assets.clean.analyzer import ANALYZER_VERSION
from visibility_assets.config import EXAMPLE_CONFIG_DIR, load_config
from visibility_assets.core.days import yesterday
from visibility_assets.core.partitions import partition_tags
from visibility_assets.definitions import build_definitions
from visibility_assets.operate.automation import analysis_version

from tests.conftest import write_config
from tests.pipeline import pipeline, read_warehouse


def _two_platform_config(tmp_path):
    """The example config with two platforms and one brand fewer."""
    directory = write_config(tmp_path / "config", 8787)
    brands = yaml.safe_load((directory / "brands.yaml").read_text(encoding="utf-8"))
    brands["brands"] = brands["brands"][:-1]
    (directory / "brands.yaml").write_text(yaml.safe_dump(brands, allow_unicode=True), encoding="utf-8")
    platforms = yaml.safe_load((directory / "platforms.yaml").read_text(encoding="utf-8"))
    platforms["platforms"] = [p for p in platforms["platforms"] if p["name"] in ("kimi", "qwen")]
    (directory / "platforms.yaml").write_text(yaml.safe_dump(platforms, allow_unicode=True), encoding="utf-8")
    prices = yaml.safe_load((directory / "prices.yaml").read_text(encoding="utf-8"))
    prices["prices"] = [p for p in prices["prices"] if p["platform"] in ("kimi", "qwen")]
    (directory / "prices.yaml").write_text(yaml.safe_dump(prices, allow_unicode=True), encoding="utf-8")
    return directory


def test_the_config_folder_decides_partitions_schedule_and_sensors(tmp_path):
    config = load_config(_two_platform_config(tmp_path))
    defs = build_definitions(config)

    raw = defs.resolve_assets_def("raw_ai_responses")
    assert raw.partitions_def.get_partitions_def_for_dimension("platform").get_partition_keys() == ["qwen", "kimi"]
    schedule = defs.resolve_schedule_def("nightly_collection")
    requests = list(schedule(build_schedule_context(scheduled_execution_time=datetime(2026, 11, 30, 18, 0, tzinfo=timezone.utc))))
    assert [r.tags["dagster/partition/platform"] for r in requests] == ["qwen", "kimi"]
    report_sensor = defs.resolve_sensor_def("report_after_nightly_runs")
    waiting = report_sensor(build_sensor_context(instance=DagsterInstance.ephemeral()))
    assert "qwen, kimi" in str(waiting)

    resources = defs.resources
    assert resources["visibility_config"].config_dir == str(config.directory)
    catalog_sensor = defs.resolve_sensor_def("catalog_change_sensor")
    first = catalog_sensor(build_sensor_context(instance=DagsterInstance.ephemeral(), resources=resources))
    assert first.cursor == analysis_version(config)
    assert config.catalog.version != load_config(EXAMPLE_CONFIG_DIR).catalog.version


@pytest.mark.dagster
def test_the_assets_read_the_config_folder_the_definitions_were_built_from(tmp_path, visibility_home):
    config = load_config(_two_platform_config(tmp_path))
    defs = build_definitions(config)

    result = defs.resolve_job_def("catalog_job").execute_in_process(instance=DagsterInstance.ephemeral())
    assert result.success
    with read_warehouse() as conn:
        assert conn.execute("SELECT count(*) FROM brand_catalog").fetchone()[0] == len(config.brands) == 39


@pytest.mark.slow  # over a second by design
def test_the_report_waits_for_every_platform_and_is_requested_once_a_day():
    defs = pipeline()
    instance = DagsterInstance.ephemeral()
    nightly = defs.resolve_job_def("nightly_platform_job")
    day = yesterday().isoformat()
    platforms = load_config().platform_names
    statuses = [DagsterRunStatus.SUCCESS] * (len(platforms) - 2) + [DagsterRunStatus.FAILURE, DagsterRunStatus.STARTED]
    for platform, status in zip(platforms, statuses):
        instance.create_run_for_job(nightly, status=status, tags=partition_tags(day, platform))
    sensor = defs.resolve_sensor_def("report_after_nightly_runs")

    waiting = sensor(build_sensor_context(instance=instance))
    assert isinstance(waiting, SkipReason) and platforms[-1] in str(waiting) and platforms[-2] not in str(waiting)

    instance.create_run_for_job(nightly, status=DagsterRunStatus.SUCCESS, tags=partition_tags(day, platforms[-1]))
    request = sensor(build_sensor_context(instance=instance))
    assert isinstance(request, RunRequest) and request.run_key == f"report-{day}"
    # The report job makes the SQL views and runs their tests, then the report and the lake maintenance.
    assert defs.resolve_job_def("report_job").asset_layer.selected_asset_keys == {
        AssetKey("visibility_report"), AssetKey("lake_maintenance"), *(AssetKey(name) for name in
                                         ("stg_samples", "stg_brand_results", "stg_judge_verdicts",
                                          "stg_label_reviews",
                                          "int_brand_results", "mention_metrics",
                                          "visibility_alerts", "sentiment_agreement", "stg_mention_cues",
                                          "brand_claims", "untracked_brands", "top_search_queries", "faults_by_class"))}


def test_a_new_analyzer_version_reanalyses_history_and_records_why(tmp_path, visibility_home):
    """The cursor holds brands.yaml's hash and the analyzer's version; either change re-analyses."""
    config = load_config(_two_platform_config(tmp_path))
    defs = build_definitions(config)
    sensor = defs.resolve_sensor_def("catalog_change_sensor")
    context = build_sensor_context(instance=DagsterInstance.ephemeral(), resources=defs.resources,
                                   cursor=f"{config.catalog.version}|0.9.0")
    result = sensor(context)
    assert result.cursor == analysis_version(config)
    assert sorted(r.job_name for r in result.run_requests) == ["catalog_job", "reanalysis_job", "reanalysis_job"]
    with read_warehouse() as conn:
        [(kind, reason)] = conn.execute("SELECT kind, reason FROM collection_events").fetchall()
    assert kind == "analyzer_version" and reason.startswith(f"analyzer 0.9.0 -> {ANALYZER_VERSION}")

    unchanged = sensor(build_sensor_context(instance=DagsterInstance.ephemeral(), resources=defs.resources,
                                            cursor=result.cursor))
    assert "unchanged" in str(unchanged)


def test_a_change_of_the_domain_table_reanalyses_history(tmp_path, visibility_home):
    """Cited domains are classed when answers are cleaned: a new class needs a re-analysis."""
    directory = _two_platform_config(tmp_path)
    before = analysis_version(load_config(directory))
    (directory / "domains.yaml").write_text("domains:\n  - {domain: sspai.com, class: news}\n")
    defs = build_definitions(load_config(directory))
    result = defs.resolve_sensor_def("catalog_change_sensor")(
        build_sensor_context(instance=DagsterInstance.ephemeral(), resources=defs.resources, cursor=before))
    assert result.cursor != before and {r.job_name for r in result.run_requests} == {"catalog_job", "reanalysis_job"}
