"""Automation: every job of the pipeline (each defined once, named in core/jobs.py), the
nightly and weekly schedules, the sensor that re-analyses history after an alias change
(which never asks a platform again) and the one that rebuilds a partition an analyst reviewed. Sensors that belong to a stage live with it
(events/defs.py, report/defs.py) and name the jobs they launch."""

import hashlib
import json
import os
from collections.abc import Sequence
from pathlib import Path
from datetime import UTC, date, datetime, timedelta

import duckdb
from dagster import (
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

from visibility_assets.clean.analyzer import ANALYZER_VERSION
from visibility_assets.config.resource import VisibilityConfigResource
from visibility_assets.core.days import TIMEZONE, yesterday
from visibility_assets.core.jobs import CATALOG_JOB, MAINTENANCE_JOB, NIGHTLY_JOB, REANALYSIS_JOB, REPORT_JOB
from visibility_assets.core.partitions import partition_key, partition_tags
from visibility_assets.core.paths import DataDirResource
from visibility_assets.events.model import Event, stable_id
from visibility_assets.events.service import record_events
from visibility_assets.measure.defs import MODEL_KIND_TAG
from visibility_assets.review.store import ReviewStore
from visibility_assets.warehouse.resource import WarehouseResource

RANGE_START, RANGE_END = "dagster/asset_partition_range_start", "dagster/asset_partition_range_end"
LOOKBACK_ENV = "VISIBILITY_REANALYSIS_DAYS"
DEFAULT_LOOKBACK_DAYS = 90
DEFAULT_DEADLINE = "06:00"

REPORT = AssetSelection.keys("visibility_report")
# The SQL views and tables: the runner makes or replaces a view wherever a model reads it and its
# definition changed (measure/defs.py), so a platform's run leaves them out; a table (built over
# all history: untracked_brands, whose spellings of a brand are grouped across every day) is
# built once after the night rather than read as a view on every page. The report job, once a
# day after all platforms, materializes them and runs their tests.
SQL_VIEWS = AssetSelection.tag(MODEL_KIND_TAG, "view") | AssetSelection.tag(MODEL_KIND_TAG, "table")

# The chain for one platform and day: collection, cleaning, metrics and alerts. The report
# is built once a day after all platforms (report/defs.py).
nightly_job = define_asset_job(
    NIGHTLY_JOB,
    selection=AssetSelection.keys("raw_ai_responses").downstream() - REPORT - SQL_VIEWS,
    description="One platform's day: raw answers, cleaned samples, metrics and alerts.",
)

# Re-analysis after brands.yaml changed: everything downstream of the cleaned samples, and the
# models those read that are built from the collection tables (int_partition_requests), never the
# raw answers nor the catalog (catalog_job loads it first).
REANALYSED = AssetSelection.keys("cleaned_samples").downstream() - REPORT - SQL_VIEWS
reanalysis_job = define_asset_job(
    REANALYSIS_JOB,
    selection=REANALYSED.upstream() - AssetSelection.keys("raw_ai_responses", "brand_catalog").upstream()
    - REPORT - SQL_VIEWS,
    description="Cleaned samples, metrics and alerts built again from stored answers; asks no platform.",
)

catalog_job = define_asset_job(CATALOG_JOB, selection=AssetSelection.keys("brand_catalog"),
                               description="brands.yaml loaded into the warehouse.")

MAINTENANCE = AssetSelection.keys("lake_maintenance")

# After every platform's night (report/defs.py's sensor): the views, the report, and the lake
# merged and its snapshots expired, so that the next night, the pages and a backfill read a
# compact lake whatever the history.
report_job = define_asset_job(REPORT_JOB, selection=SQL_VIEWS | REPORT | MAINTENANCE,
                              description="After the night: the SQL views and their tests, the HTML report of the"
                                          " latest day with metrics, and the lake maintenance.")

maintenance_job = define_asset_job(MAINTENANCE_JOB, selection=MAINTENANCE,
                                   description="The lake maintenance alone (the after-night job runs it too).")

JOBS = (nightly_job, reanalysis_job, catalog_job, report_job, maintenance_job)


def nightly_run_requests(scheduled_at: datetime, platform_names: Sequence[str]) -> list[RunRequest]:
    """One run per platform for the previous day (Asia/Shanghai), tagged with its partition."""
    day = yesterday(scheduled_at).isoformat()
    return [
        RunRequest(
            run_key=f"nightly-{day}-{platform}",
            partition_key=str(partition_key(day, platform)),
            tags=partition_tags(day, platform),
            run_config={"ops": {"raw_ai_responses": {"config": {"deadline": DEFAULT_DEADLINE}}}},
        )
        for platform in platform_names
    ]


def build_nightly_schedule(platform_names: Sequence[str]):
    @schedule(
        job=nightly_job,
        cron_schedule="0 2 * * *",
        execution_timezone=TIMEZONE,
        description="02:00 Asia/Shanghai: yesterday's partition of every platform, one run each;"
        " collection stops at 06:00 and defers the rest.",
    )
    def nightly_collection(context: ScheduleEvaluationContext):
        return nightly_run_requests(context.scheduled_execution_time, platform_names)

    return nightly_collection


def backfill_tags(since: date, until: date, platform: str) -> dict[str, str]:
    """A single run over one platform's date range. Range runs carry no dagster/partition/*
    tags, so the platform goes in visibility/platform, which the run queue also limits."""
    return {RANGE_START: str(partition_key(since.isoformat(), platform)),
            RANGE_END: str(partition_key(until.isoformat(), platform)),
            "visibility/platform": platform, "visibility/backfill": "reanalysis"}


def first_collected_day(warehouse: WarehouseResource) -> date | None:
    """The first day with raw answers, or None when the warehouse is empty."""
    try:
        with warehouse.read_only() as conn:
            return conn.execute("SELECT min(date) FROM raw_ai_responses").fetchall()[0][0]
    except duckdb.Error:
        return None


def reanalysis_range(warehouse: WarehouseResource) -> tuple[date, date]:
    """The last VISIBILITY_REANALYSIS_DAYS days up to yesterday, from the first collected day on."""
    until = yesterday()
    since = until - timedelta(days=int(os.environ.get(LOOKBACK_ENV, DEFAULT_LOOKBACK_DAYS)) - 1)
    return max(since, first_collected_day(warehouse) or since), until


@sensor(
    jobs=[catalog_job, reanalysis_job],
    minimum_interval_seconds=60,
    description="When brands.yaml changes (its hash), the domain table or the analyzer's version does, re-analyse the last"
    " VISIBILITY_REANALYSIS_DAYS days (90 by default) of every platform: one single run per platform over"
    " cleaned_samples and everything downstream, never raw_ai_responses.",
)
def catalog_change_sensor(context: SensorEvaluationContext, visibility_config: VisibilityConfigResource,
                          warehouse: WarehouseResource):
    config = visibility_config.load()
    version = analysis_version(config)
    if context.cursor is None:
        return SensorResult(cursor=version, skip_reason=f"first look at brands.yaml and the analyzer ({version})")
    # A cursor from before a part was added to it: that part is taken as the current one.
    seen_catalog, seen_analyzer, seen_domains = (context.cursor.split("|") + ["", ""])[:3]
    _, analyzer, domains = version.split("|")
    seen = f"{seen_catalog}|{seen_analyzer or analyzer}|{seen_domains or domains}"
    if seen == version:
        return SkipReason(f"brands.yaml, the domain table and the analyzer unchanged ({version})")
    since, until = reanalysis_range(warehouse)
    if seen_analyzer and seen_analyzer != ANALYZER_VERSION:
        record_analyzer_change(warehouse, config, seen_analyzer, since, until)
    requests = [RunRequest(run_key=f"catalog-{version}", job_name=catalog_job.name)]
    requests += [
        RunRequest(run_key=f"reanalysis-{version}-{platform}", job_name=reanalysis_job.name,
                   tags=backfill_tags(since, until, platform))
        for platform in config.platform_names
    ]
    return SensorResult(run_requests=requests, cursor=version)


def analysis_version(config) -> str:
    """What the cleaned samples depend on besides the raw answers: brands.yaml (its hash), the
    analyzer's version and the domain table (built-in and domains.yaml)."""
    table = json.dumps(sorted((d.domain, d.kind) for d in config.domains))
    return f"{config.catalog.version}|{ANALYZER_VERSION}|{hashlib.sha256(table.encode()).hexdigest()[:12]}"


def record_analyzer_change(warehouse: WarehouseResource, config, previous: str, since: date, until: date) -> None:
    """An event that says why history was analysed again (it asks no platform anything)."""
    now = datetime.now(UTC)
    event = Event(event_id=stable_id("analyzer_version", previous, ANALYZER_VERSION), kind="analyzer_version",
                  date=until, platform=None, category=None, subject=ANALYZER_VERSION,
                  reason=f"analyzer {previous} -> {ANALYZER_VERSION}: {since} .. {until} re-analysed on every platform"
                  " (`visibility replay` shows what changes)", created_at=now, collects=False)
    record_events(warehouse, config, [event], now)


@sensor(
    jobs=[reanalysis_job],
    minimum_interval_seconds=30,
    description="When an analyst reviews labels in the workspace (its Review view), the reviewed partitions"
    " cleaned and measured again from the stored answers, so that the metrics count the reviewer's labels;"
    " never asks a platform.",
)
def review_sensor(context: SensorEvaluationContext, data_dir: DataDirResource):
    seen = float(context.cursor or 0)
    newest, partitions = ReviewStore.under(Path(data_dir.path)).changed_since(seen)
    if not partitions:
        since = datetime.fromtimestamp(seen, UTC)
        return SensorResult(cursor=str(newest), skip_reason=f"no review since {since:%F %T} UTC")
    return SensorResult(cursor=str(newest), run_requests=[
        RunRequest(run_key=f"review-{newest}-{day}-{platform}", job_name=reanalysis_job.name,
                   partition_key=str(partition_key(day, platform)),
                   tags={**partition_tags(day, platform), "visibility/reviews": "rebuild"})
        for day, platform in partitions])
