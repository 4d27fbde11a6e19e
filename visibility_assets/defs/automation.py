"""How the pipeline runs every day: the nightly job and schedule, and backfills after alias
changes (re-analysis of history, which never asks a platform again)."""

import os
from datetime import date, datetime, timedelta
from zoneinfo import ZoneInfo

import duckdb
from dagster import (
    AssetKey,
    AssetSelection,
    RunRequest,
    ScheduleEvaluationContext,
    SensorEvaluationContext,
    SensorResult,
    SkipReason,
    define_asset_job,
    schedule,
    sensor,
)

from ..config import load_config
from .partitions import TIMEZONE, daily_platform_partitions, partition_key, partition_tags
from ..warehouse.resource import open_read_only

RANGE_START, RANGE_END = "dagster/asset_partition_range_start", "dagster/asset_partition_range_end"
LOOKBACK_ENV = "VISIBILITY_REANALYSIS_DAYS"
DEFAULT_LOOKBACK_DAYS = 90

DEFAULT_DEADLINE = "06:00"

# The whole chain for one platform and day: collection, cleaning, metrics, alerts, report.
nightly_job = define_asset_job(
    "nightly_platform_job",
    selection=AssetSelection.all() - AssetSelection.keys("brand_catalog"),
    partitions_def=daily_platform_partitions,
    description="One platform's day: raw answers, cleaned samples, metrics, alerts and the report.",
)

# Re-analysis after brands.yaml changed: everything downstream of the raw answers, never them.
REANALYSIS = AssetSelection.keys("cleaned_samples").downstream() - AssetSelection.keys("visibility_report")


def nightly_run_requests(scheduled_at: datetime) -> list[RunRequest]:
    """One run per platform for the previous day (Asia/Shanghai), tagged with its partition."""
    day = (scheduled_at.astimezone(ZoneInfo(TIMEZONE)).date() - timedelta(days=1)).isoformat()
    return [
        RunRequest(
            run_key=f"nightly-{day}-{platform}",
            partition_key=str(partition_key(day, platform)),
            tags=partition_tags(day, platform),
            run_config={"ops": {"raw_ai_responses": {"config": {"deadline": DEFAULT_DEADLINE}}}},
        )
        for platform in load_config().platform_names
    ]


@schedule(
    job=nightly_job,
    cron_schedule="0 2 * * *",
    execution_timezone=TIMEZONE,
    description="02:00 Asia/Shanghai: yesterday's partition of every platform, one run each;"
    " collection stops at 06:00 and defers the rest.",
)
def nightly_collection(context: ScheduleEvaluationContext):
    return nightly_run_requests(context.scheduled_execution_time)


def backfill_tags(since: date, until: date, platform: str) -> dict[str, str]:
    """A single run over one platform's date range. Range runs carry no dagster/partition/*
    tags, so the platform goes in visibility/platform, which the run queue also limits."""
    return {RANGE_START: str(partition_key(since.isoformat(), platform)),
            RANGE_END: str(partition_key(until.isoformat(), platform)),
            "visibility/platform": platform, "visibility/backfill": "reanalysis"}


def yesterday() -> date:
    return datetime.now(ZoneInfo(TIMEZONE)).date() - timedelta(days=1)


def first_collected_day() -> date | None:
    """The first day with raw answers, or None when the warehouse is busy or empty."""
    try:
        with open_read_only() as conn:
            return conn.execute("SELECT min(date) FROM raw_ai_responses").fetchall()[0][0]
    except duckdb.Error:
        return None


@sensor(
    minimum_interval_seconds=60,
    description="When brands.yaml changes (its hash), re-analyse the last VISIBILITY_REANALYSIS_DAYS days"
    " (90 by default) of every platform: one single run per platform over cleaned_samples and"
    " everything downstream, never raw_ai_responses.",
)
def catalog_change_sensor(context: SensorEvaluationContext):
    config = load_config()
    version = config.catalog.version
    if context.cursor == version:
        return SkipReason(f"brands.yaml unchanged ({version})")
    if context.cursor is None:
        return SensorResult(cursor=version, skip_reason=f"first look at brands.yaml ({version})")
    until = yesterday()
    since = until - timedelta(days=int(os.environ.get(LOOKBACK_ENV, DEFAULT_LOOKBACK_DAYS)) - 1)
    since = max(since, first_collected_day() or since)
    keys = reanalysis_keys()
    requests = [RunRequest(run_key=f"catalog-{version}", asset_selection=[AssetKey("brand_catalog")])]
    requests += [
        RunRequest(run_key=f"reanalysis-{version}-{platform}", asset_selection=keys,
                   tags=backfill_tags(since, until, platform))
        for platform in config.platform_names
    ]
    return SensorResult(run_requests=requests, cursor=version)


def reanalysis_keys() -> list[AssetKey]:
    from ..definitions import defs

    return sorted(REANALYSIS.resolve(defs.resolve_asset_graph()), key=lambda k: k.to_user_string())
