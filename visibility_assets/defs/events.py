"""Event-driven collection in Dagster: one sensor that records new events (changes in
visibility_alerts, questions added), plans them into tasks (events/), and launches each task
as a run of the nightly job for its partition, with `dagster/priority` from the task's
effective priority. The run queue starts higher priorities first, within the per-platform run
limit, so extra samples come before backlog without two runs of one platform at once."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from dagster import (
    DagsterRunStatus,
    RunRequest,
    RunsFilter,
    SensorEvaluationContext,
    SensorResult,
    sensor,
)

from ..config import VisibilityConfig
from ..events.model import DONE, FAILED, PLANNED, REQUESTED, Task
from ..events.priority import effective_priority
from ..events.service import detect_and_plan, open_tasks, save_tasks
from ..warehouse.resource import WarehouseResource
from .automation import nightly_job
from .partitions import partition_key, partition_tags
from .resources import VisibilityConfigResource

TASK_TAG = "visibility/task"
PRIORITY_TAG = "dagster/priority"
# A task marked requested whose run never appeared (the tick failed after storing it) is planned again.
LAUNCH_GRACE = timedelta(minutes=10)
ENDED = {DagsterRunStatus.SUCCESS, DagsterRunStatus.FAILURE, DagsterRunStatus.CANCELED}


def task_run_request(task: Task) -> RunRequest:
    day = task.date.isoformat()
    return RunRequest(
        run_key=f"task-{task.task_id}-{task.retries}",
        job_name=nightly_job.name,
        partition_key=str(partition_key(day, task.platform)),
        tags={**partition_tags(day, task.platform), TASK_TAG: task.task_id, PRIORITY_TAG: str(task.effective_priority),
              "visibility/task_kind": task.kind},
        run_config={"ops": {"raw_ai_responses": {"config": {"task_id": task.task_id}}}},
    )


def dispatch(tasks: list[Task], config: VisibilityConfig, last_runs: dict[str, tuple[str, DagsterRunStatus]],
             now: datetime) -> tuple[list[RunRequest], list[Task]]:
    """Run requests for planned tasks, highest effective priority first, and the tasks whose
    state changed: a requested task whose run ended is done, planned again with one more
    retry, or failed after max_attempts (so a bad task cannot hog the queue)."""
    weights = config.events.priority
    changed: list[Task] = []
    for task in tasks:
        if task.state != REQUESTED:
            continue
        run = last_runs.get(task.task_id)
        if run is not None and run[1] != DagsterRunStatus.SUCCESS and run[0] == task.run_id and task.retries > 0:
            run = None  # the failure an earlier tick already counted; the retry's run has not appeared yet
        if run is None:
            if now - (task.updated_at or task.created_at) > LAUNCH_GRACE:
                task.move(PLANNED, now, "its run never started; planned again")
                changed.append(task)
            continue
        run_id, status = run
        if status not in ENDED:
            continue
        task.run_id = run_id
        if status == DagsterRunStatus.SUCCESS:
            task.move(DONE, now, f"run {run_id} succeeded")
        elif task.retries + 1 >= weights.max_attempts:
            task.retries += 1
            task.move(FAILED, now, f"run {run_id} {status.value.lower()}; {task.retries} attempts, giving up")
        else:
            task.retries += 1
            task.move(PLANNED, now, f"run {run_id} {status.value.lower()}; retry {task.retries}")
        changed.append(task)
    planned = [t for t in tasks if t.state == PLANNED and t.platform in config.platform_names]
    for task in planned:
        task.effective_priority = effective_priority(task, now, weights)
    planned.sort(key=lambda t: (-t.effective_priority, t.created_at))
    requests = []
    for task in planned:
        requests.append(task_run_request(task))
        task.move(REQUESTED, now, f"run requested at priority {task.effective_priority}")
        if task not in changed:
            changed.append(task)
    return requests, changed


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
    job=nightly_job,
    minimum_interval_seconds=30,
    description="Events into tasks: a borderline change in visibility_alerts gets extra rounds of its"
    " category's questions that day, questions added to questions.yaml are asked for the latest"
    " collected day; each task runs the nightly job for its partition at its effective priority"
    " (README, 'Events and tasks').",
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
