"""How the pipeline runs every day: the nightly job and schedule, and backfills after alias
changes (re-analysis of history, which never asks a platform again)."""

from datetime import datetime, timedelta
from zoneinfo import ZoneInfo

from dagster import (
    AssetKey,
    AssetSelection,
    RunRequest,
    ScheduleEvaluationContext,
    define_asset_job,
    schedule,
)

from .config import load_config
from .partitions import TIMEZONE, daily_platform_partitions, partition_key, partition_tags

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


def nightly_run_requests(scheduled_at: datetime, deadline: str = DEFAULT_DEADLINE) -> list[RunRequest]:
    """One run per platform for the previous day (Asia/Shanghai), tagged with its partition."""
    day = (scheduled_at.astimezone(ZoneInfo(TIMEZONE)).date() - timedelta(days=1)).isoformat()
    return [
        RunRequest(
            run_key=f"nightly-{day}-{platform}",
            partition_key=str(partition_key(day, platform)),
            tags=partition_tags(day, platform),
            run_config={"ops": {"raw_ai_responses": {"config": {"deadline": deadline}}}},
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


def reanalysis_keys() -> list[AssetKey]:
    from .definitions import defs

    return sorted(REANALYSIS.resolve(defs.resolve_asset_graph()), key=lambda k: k.to_user_string())
