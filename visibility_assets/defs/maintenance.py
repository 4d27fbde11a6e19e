"""The weekly lake maintenance: its asset (figures in the metadata), job and schedule."""

from datetime import timedelta

from dagster import AssetExecutionContext, Config, MaterializeResult, ScheduleDefinition, asset, define_asset_job
from pydantic import Field

from ..days import TIMEZONE, yesterday
from ..warehouse.maintenance import maintain
from ..warehouse.resource import WarehouseResource


class MaintenanceConfig(Config):
    snapshot_retention_days: int = Field(
        default=7, ge=0, le=3650, description="snapshots (time travel, --as-of) older than this expire")
    raw_retention_days: int | None = Field(
        default=None, ge=1, le=36500, description="raw answers of days older than this are deleted; none: kept forever")


@asset(
    group_name="operate",
    kinds={"duckdb"},
    description="Lake maintenance: raw-answer retention, inlined rows to Parquet, small files merged,"
    " old snapshots expired, unreferenced files deleted. Files and bytes before and after in the metadata.",
)
def lake_maintenance(context: AssetExecutionContext, config: MaintenanceConfig,
                     warehouse: WarehouseResource) -> MaterializeResult:
    if not warehouse.exists():
        return MaterializeResult(metadata={"skipped": "no warehouse yet"})
    today = yesterday() + timedelta(days=1)
    figures = maintain(warehouse.settings(), today, config.snapshot_retention_days, config.raw_retention_days)
    context.log.info(f"lake maintenance: {figures.files_before} files -> {figures.files_after}")
    return MaterializeResult(metadata=figures.as_metadata())


maintenance_job = define_asset_job("lake_maintenance_job", selection=[lake_maintenance],
                                   description="The weekly lake maintenance.")

weekly_maintenance = ScheduleDefinition(
    name="weekly_lake_maintenance", job=maintenance_job, cron_schedule="30 7 * * 0", execution_timezone=TIMEZONE,
    description="Sundays 07:30 Asia/Shanghai, after the night's collection has ended.")
