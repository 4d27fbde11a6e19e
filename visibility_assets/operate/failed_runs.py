"""A failed run, told: its fault class (core/faults.py) as a tag of the run, a row of
fault_events, and a message to the webhooks routed for that class (a failed run never reaches
its own alert_notifications step). The run failure sensor does this for runs the daemon
launched; a command (the demo, `visibility ask`) for the runs it executed itself.
"""

from __future__ import annotations

from datetime import UTC, date, datetime

import httpx
from dagster import DagsterEventType, DagsterInstance, RunFailureSensorContext, run_failure_sensor
from dagster._core.storage.dagster_run import DagsterRun

from visibility_assets.config import VisibilityConfig
from visibility_assets.config.resource import VisibilityConfigResource
from visibility_assets.core.faults import FAULT_CLASS_TAG, RULE, class_of_error
from visibility_assets.core.paths import DataDirResource
from visibility_assets.notify import notify
from visibility_assets.notify.faults import FaultMessage, record_faults
from visibility_assets.warehouse.lake import lake_settings
from visibility_assets.warehouse.resource import WarehouseResource

FAILURE_EVENTS = {DagsterEventType.STEP_FAILURE, DagsterEventType.RUN_FAILURE}


def failure_of_run(instance: DagsterInstance, run_id: str) -> tuple[str, str]:
    """(fault class, message) of a failed run: the class its step's Failure named, else the one
    its exception chain says (a full disk, the warehouse, the config, the pipeline's own code)."""
    records = instance.get_records_for_run(run_id, of_type=FAILURE_EVENTS).records
    events = [r.event_log_entry.dagster_event for r in records if r.event_log_entry.dagster_event]
    steps = [e for e in events if e.event_type == DagsterEventType.STEP_FAILURE]
    for event in reversed(steps or events):
        data = event.event_specific_data
        error = getattr(data, "error", None)
        message = (error.message.strip() if error else event.message or "run failed").removeprefix(
            "dagster._core.definitions.events.Failure: ")
        user = getattr(data, "user_failure_data", None)
        named = (user.metadata or {}).get("fault_class") if user else None
        if named is not None:
            return str(named.value), (user.description or message)
        links = []
        while error is not None and len(links) < 20:
            links.append((error.cls_name or "", error.message or ""))
            error = error.cause or error.context
        return class_of_error(links), message
    return RULE, "run failed"


def classify_failed_run(instance: DagsterInstance, run_id: str) -> tuple[str, str]:
    """The failed run's fault class, also set as its tag, and its message."""
    fault_class, detail = failure_of_run(instance, run_id)
    instance.add_run_tags(run_id, {FAULT_CLASS_TAG: fault_class})
    return fault_class, detail


def report_failed_run(instance: DagsterInstance, run: DagsterRun, config: VisibilityConfig,
                      warehouse: WarehouseResource, report_url: str | None = None) -> FaultMessage:
    """Classify the run, store its fault and tell the webhooks routed for its class."""
    fault_class, detail = classify_failed_run(instance, run.run_id)
    fault = FaultMessage(date=_day(run), platform=run.tags.get("dagster/partition/platform")
                         or run.tags.get("visibility/platform"), kind="run_failed", fault_class=fault_class,
                         subject=run.job_name, detail=detail, run_id=run.run_id, report_url=report_url,
                         fault_id=f"run_failed:{run.run_id}")
    tell_faults([fault], config, warehouse, run.run_id)
    return fault


def report_failed_runs(instance: DagsterInstance, run_ids: list[str], config: VisibilityConfig) -> None:
    """What a command does for the runs it executed that failed (no sensor runs for it)."""
    if not run_ids:
        return
    warehouse = WarehouseResource.from_settings(lake_settings())
    for run in filter(None, map(instance.get_run_by_id, run_ids)):  # a run the storage never took: none
        report_failed_run(instance, run, config, warehouse, config.notifications.report_url)


def tell_faults(faults: list[FaultMessage], config: VisibilityConfig, warehouse: WarehouseResource,
                run_id: str) -> None:
    """Store the faults and send them to the webhooks routed for their classes."""
    warehouse.write(lambda conn: record_faults(conn, faults))
    with httpx.Client() as client:
        notify(config.notifications.webhooks, faults, warehouse, client, _Quiet(), run_id)


def _day(run: DagsterRun) -> date:
    text = run.tags.get("dagster/partition/date") or (run.tags.get("dagster/asset_partition_range_end") or "")[:10]
    try:
        return date.fromisoformat(text)
    except ValueError:
        return datetime.now(UTC).date()


class _Quiet:
    """notify's log, where nobody reads one (the outcomes are in notification_deliveries)."""

    def info(self, message: str) -> None:
        pass

    warning = info


@run_failure_sensor(
    name="fault_of_failed_run",
    minimum_interval_seconds=30,
    description="Each failed run gets its fault class (source, rule or downstream) as the tag"
    " visibility/fault_class and a row of fault_events, and is told to the webhooks routed for that class.",
)
def fault_of_failed_run(context: RunFailureSensorContext, visibility_config: VisibilityConfigResource,
                        warehouse: WarehouseResource, data_dir: DataDirResource) -> None:
    config = visibility_config.load()
    report_url = config.notifications.report_url or (data_dir.reports_dir() / "latest.html").as_uri()
    report_failed_run(context.instance, context.dagster_run, config, warehouse, report_url)
