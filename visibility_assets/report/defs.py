"""Report: visibility_report, the daily HTML report, built once a day after every platform's
nightly run has finished."""

from collections.abc import Sequence
from pathlib import Path

from dagster import (
    AssetKey,
    DagsterRunStatus,
    MaterializeResult,
    MetadataValue,
    RunRequest,
    RunsFilter,
    SensorEvaluationContext,
    SkipReason,
    asset,
    sensor,
)

from visibility_assets.config.resource import VisibilityConfigResource
from visibility_assets.core.days import yesterday
from visibility_assets.core.faults import writing
from visibility_assets.core.jobs import NIGHTLY_JOB, REPORT_JOB
from visibility_assets.core.partitions import DATE, PLATFORM
from visibility_assets.core.paths import DataDirResource
from visibility_assets.core.personal_data import mask
from visibility_assets.measure.project import load_project
from visibility_assets.measure.runner import create_macros
from visibility_assets.report.html import latest_date, render_report
from visibility_assets.review.store import ReviewStore
from visibility_assets.report.quality import COLUMNS as QUALITY_COLUMNS
from visibility_assets.report.quality import quality_rows
from visibility_assets.warehouse.resource import WarehouseResource

FINISHED = frozenset({DagsterRunStatus.SUCCESS, DagsterRunStatus.FAILURE, DagsterRunStatus.CANCELED})


@asset(
    deps=[AssetKey("mention_metrics"), AssetKey("visibility_alerts"), AssetKey("fct_invalid_answers"),
          AssetKey("fct_collection_quality"), AssetKey("cited_domains"), AssetKey("fct_model_changes"),
          AssetKey("untracked_brands")],
    group_name="report",
    kinds={"html"},
    description="A static HTML report of the latest day: mention rates with intervals, share of voice,"
    " 30-day trends, sentiment, the options offered that brands.yaml does not track, where each AI gets its"
    " facts, alerts, invalid answers and collection quality.",
)
def visibility_report(warehouse: WarehouseResource, data_dir: DataDirResource,
                      visibility_config: VisibilityConfigResource) -> MaterializeResult:
    own = [(b.name, b.category) for b in visibility_config.load().catalog.brands if b.own]
    with warehouse.read_only() as conn:
        create_macros(conn, load_project())  # the report's intervals use the models' statistics
        day = latest_date(conn)
        if day is None:
            raise ValueError("mention_metrics is empty: materialize some partitions first")
        reviews = ReviewStore.under(Path(data_dir.path)).reviews()
        # A file anyone may be sent: personal data masked.
        html = mask(render_report(conn, day, brands=own, reviews=reviews))
        summary = conn.execute(
            """SELECT count(DISTINCT platform), count(*), avg(mention_rate),
                      (SELECT count(*) FROM visibility_alerts WHERE date = $day AND decision = 'alert')
               FROM mention_metrics WHERE date = $day""", {"day": day}).fetchone()
        quality = {row[0]: dict(zip(QUALITY_COLUMNS[2:], row[2:])) for row in quality_rows(conn, day)}
    folder = data_dir.reports_dir()
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"visibility_report_{day.isoformat()}.html"
    with writing("the report", folder):
        path.write_text(html, encoding="utf-8")
        (folder / "latest.html").write_text(html, encoding="utf-8")
    return MaterializeResult(metadata={
        "path": MetadataValue.path(str(path)), "date": day.isoformat(), "platforms": summary[0],
        "metric_rows": summary[1], "mean_mention_rate": float(summary[2] or 0), "alerts_today": summary[3],
        "collection_quality": MetadataValue.json(quality),
    })


def build_report_sensor(platform_names: Sequence[str]):
    """Requests the report once for yesterday, when every platform's latest nightly run for
    that day has finished (succeeded or not: a failed platform must not hold back the others)."""

    @sensor(job_name=REPORT_JOB, minimum_interval_seconds=120,
            description="After every platform's nightly run for yesterday has finished, build the report once.")
    def report_after_nightly_runs(context: SensorEvaluationContext):
        day = yesterday().isoformat()
        status = latest_nightly_status(context, day)
        waiting = [p for p in platform_names if status.get(p) not in FINISHED]
        if waiting:
            return SkipReason(f"{day}: waiting for the nightly runs of {', '.join(waiting)}")
        return RunRequest(run_key=f"report-{day}")

    return report_after_nightly_runs


def latest_nightly_status(context: SensorEvaluationContext, day: str) -> dict[str, DagsterRunStatus]:
    """Platform -> status of its latest nightly run for `day`."""
    records = context.instance.get_run_records(
        RunsFilter(job_name=NIGHTLY_JOB, tags={f"dagster/partition/{DATE}": day}))  # newest first
    status: dict[str, DagsterRunStatus] = {}
    for record in records:
        status.setdefault(record.dagster_run.tags.get(f"dagster/partition/{PLATFORM}"), record.dagster_run.status)
    return status
