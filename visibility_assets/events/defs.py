"""Event-driven collection in Dagster: one sensor that records new events (changes in
visibility_alerts, questions added), plans them into tasks (events/), and launches each task
as a run of the nightly job for its partition, with `dagster/priority` from the task's
effective priority. The run queue starts higher priorities first, within the per-platform run
limit, so extra samples come before backlog without two runs of one platform at once."""

from __future__ import annotations

from datetime import UTC, datetime

from dagster import DagsterRunStatus, RunsFilter, SensorEvaluationContext, SensorResult, sensor

from visibility_assets.config.resource import VisibilityConfigResource
from visibility_assets.core.jobs import NIGHTLY_JOB
from visibility_assets.events.model import REQUESTED, Task
from visibility_assets.events.service import detect_and_plan, open_tasks, save_tasks
from visibility_assets.events.tasks import TASK_TAG, dispatch
from visibility_assets.warehouse.resource import WarehouseResource


def last_runs_of(context: SensorEvaluationContext, tasks: list[Task]) -> dict[str, tuple[str, DagsterRunStatus]]:
    """The latest run of each requested task: by its tag (sensor launches), else by its run id (launchpad)."""
    found = {}
    for task in tasks:
        if task.state != REQUESTED:
            continue
        runs = context.instance.get_runs(filters=RunsFilter(tags={TASK_TAG: task.task_id}), limit=1)
        if not runs and task.run_id:
            runs = context.instance.get_runs(filters=RunsFilter(run_ids=[task.run_id]), limit=1)
        if runs:
            found[task.task_id] = (runs[0].run_id, runs[0].status)
    return found


@sensor(
    job_name=NIGHTLY_JOB,
    minimum_interval_seconds=30,
    description="Events into tasks: a borderline change in visibility_alerts gets extra rounds of its"
    " category's questions that day, questions added to questions.yaml are asked for the latest"
    " collected day; each task runs the nightly job for its partition at its effective priority"
    " (docs/events.md).",
)
def collection_task_sensor(context: SensorEvaluationContext, visibility_config: VisibilityConfigResource,
                           warehouse: WarehouseResource):
    if not warehouse.exists():
        return SensorResult(skip_reason="no warehouse yet")
    config = visibility_config.load()
    now = datetime.now(UTC)
    plan = detect_and_plan(warehouse, config, now)
    tasks = open_tasks(warehouse)
    requests, changed = dispatch(tasks, config, last_runs_of(context, tasks), now)
    save_tasks(warehouse, changed)  # stored before the runs are requested: a crash re-plans, never repeats
    if not requests and not plan.events:
        return SensorResult(skip_reason="no new events, no task to launch")
    context.log.info(f"{len(plan.events)} new event(s), {len(plan.new_tasks)} new task(s),"
                     f" {len(requests)} run(s) requested")
    return SensorResult(run_requests=requests)
