"""Notify: clear alerts (decision 'alert') of the run's partitions go to the webhooks of
events.yaml's `notifications:` section, each alert to each webhook once (notify/deliveries.py)."""

from datetime import timedelta

import httpx
from dagster import (
    AssetExecutionContext,
    AssetKey,
    BackfillPolicy,
    MaterializeResult,
    MetadataValue,
    MultiPartitionsDefinition,
    asset,
)

from visibility_assets.config.resource import VisibilityConfigResource
from visibility_assets.core.partitions import Partition, run_partitions
from visibility_assets.core.paths import DataDirResource
from visibility_assets.measure.project import SqlProject
from visibility_assets.notify import AlertMessage, notify
from visibility_assets.notify.faults import FaultMessage, partition_faults
from visibility_assets.warehouse.db import fill_run_partitions, has_tables
from visibility_assets.warehouse.resource import WarehouseResource

READ_ALERTS = """
SELECT * FROM fct_visibility_alerts
WHERE (date, platform) IN (SELECT date, platform FROM run_partitions)
  AND decision = 'alert'
  AND date >= (SELECT max(date) FROM fct_visibility_alerts) - $max_age
ORDER BY date, platform, p_value
"""


def build_alert_notifications(partitions_def: MultiPartitionsDefinition, project: SqlProject):
    @asset(
        name="alert_notifications",
        partitions_def=partitions_def,
        # Everything the alerts are built from, so that any selection runs this after them.
        deps=[AssetKey(name) for name in project.reading("visibility_alerts")],
        backfill_policy=BackfillPolicy.single_run(),
        group_name="notify",
        kinds={"python"},
        description="Clear alerts of the partition sent to the webhooks configured in events.yaml"
        " (Feishu/Lark, DingTalk, WeCom, Slack, JSON), with retries; notification_deliveries records"
        " each attempt, and no alert reaches a webhook twice however often the runs repeat.",
    )
    def alert_notifications(context: AssetExecutionContext, visibility_config: VisibilityConfigResource,
                            warehouse: WarehouseResource, data_dir: DataDirResource) -> MaterializeResult:
        settings = visibility_config.load().notifications
        partitions = run_partitions(context.partition_keys)
        report_url = settings.report_url or (data_dir.reports_dir() / "latest.html").as_uri()
        messages = _messages(warehouse, partitions, settings.max_alert_age_days, report_url)
        with httpx.Client() as client:
            deliveries = notify(settings.webhooks, messages, warehouse, client, context.log, context.run_id)
        by_state: dict[str, int] = {}
        for delivery in deliveries:
            by_state[delivery.state] = by_state.get(delivery.state, 0) + 1
        # A webhook that failed after its retries does not fail the run: the alert is stored and
        # the next run of the partition tries that webhook again.
        return MaterializeResult(metadata={
            "clear_alerts": sum(isinstance(m, AlertMessage) for m in messages),
            "faults": sum(isinstance(m, FaultMessage) for m in messages), "webhooks": len(settings.webhooks),
            "deliveries": MetadataValue.json(by_state)})

    return alert_notifications


def _messages(warehouse: WarehouseResource, partitions: list[Partition], max_age_days: int,
              report_url: str) -> list[AlertMessage | FaultMessage]:
    """The clear alerts of the partitions, and their faults (a failed earlier run, a replay)."""
    with warehouse.read_only() as conn:
        fill_run_partitions(conn, partitions)
        alerts = [] if not has_tables(conn, "fct_visibility_alerts") else conn.execute(
            READ_ALERTS, {"max_age": timedelta(days=max_age_days)}).fetch_arrow_table().to_pylist()
        return [AlertMessage.from_row(row, report_url) for row in alerts] + partition_faults(conn, report_url)
