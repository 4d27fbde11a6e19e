"""The lake maintenance as an asset (figures in the metadata): the after-night job runs it once
every platform's night has ended (operate/automation.py)."""

from datetime import timedelta

from dagster import AssetExecutionContext, Config, MaterializeResult, asset
from pydantic import Field

from visibility_assets.config.resource import VisibilityConfigResource
from visibility_assets.core.days import yesterday
from visibility_assets.warehouse.maintenance import maintain
from visibility_assets.warehouse.resource import WarehouseResource


class MaintenanceConfig(Config):
    snapshot_retention_days: int | None = Field(
        default=None, ge=0, le=3650,
        description="snapshots (time travel, --as-of) older than this expire; none: retention.yaml's snapshots_days")
    raw_retention_days: int | None = Field(
        default=None, ge=1, le=36500,
        description="raw answers of days older than this are deleted; none: retention.yaml's raw_answers_days")


@asset(
    group_name="operate",
    kinds={"duckdb"},
    description="Lake maintenance: the raw evidence's retention (retention.yaml), inlined rows to Parquet, small files merged,"
    " old snapshots expired, unreferenced files deleted. Files and bytes before and after in the metadata.",
)
def lake_maintenance(context: AssetExecutionContext, config: MaintenanceConfig,
                     visibility_config: VisibilityConfigResource, warehouse: WarehouseResource) -> MaterializeResult:
    if not warehouse.exists():
        return MaterializeResult(metadata={"skipped": "no warehouse yet"})
    today = yesterday() + timedelta(days=1)
    retention = visibility_config.load().retention
    if config.raw_retention_days is not None:  # this run's own, over retention.yaml's
        retention = retention.model_copy(update={"raw_answers_days": config.raw_retention_days})
    figures = maintain(warehouse.settings(), today, retention, config.snapshot_retention_days)
    context.log.info(f"lake maintenance: {figures.files_before} files -> {figures.files_after}")
    return MaterializeResult(metadata=figures.as_metadata())
