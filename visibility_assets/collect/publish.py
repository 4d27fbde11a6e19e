"""Publishing a collection: each partition's journal into the warehouse tables users read
(raw_ai_responses, collection_requests, http_attempts) and the run's row of collection_runs."""

from __future__ import annotations

from datetime import UTC, date, datetime

from visibility_assets.collect.collector import PartitionOutcome, fault_class_of
from visibility_assets.collect.plan import TaskRequests
from visibility_assets.warehouse.resource import Published, WarehouseResource


def publish(warehouse: WarehouseResource, outcomes: list[PartitionOutcome], run_id: str,
            task: TaskRequests | None = None) -> dict[tuple[str, str], Published]:
    """Every partition the run collected, each in one transaction. Even a failed collection is
    published: what did arrive, and why the rest did not, is visible."""
    return {(o.date, o.platform): warehouse.publish_collection(o.date, o.platform, o.report.planned_keys,
                                                               run_row(run_id, o, task))
            for o in outcomes if o.report is not None}


def run_row(run_id: str, outcome: PartitionOutcome, task: TaskRequests | None) -> dict:
    """The partition's row of collection_runs for this run."""
    r = outcome.report
    return {"run_id": run_id, "date": date.fromisoformat(outcome.date), "platform": outcome.platform,
            "task_id": task.task_id if task else None, "planned": r.planned, "skipped_done": r.skipped_done,
            "sent": r.to_send, "succeeded": r.succeeded, "failed": r.failed, "deferred": r.deferred,
            "http_attempts": r.attempts, "http_429": r.http_429, "wall_s": r.wall_s,
            "error": None if outcome.error is None else str(outcome.error),
            "fault_class": None if outcome.error is None else fault_class_of(outcome.error),
            "finished_at": datetime.now(UTC)}
