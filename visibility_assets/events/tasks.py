"""A task's life after it is planned: launched as a run of the nightly job for its partition at
its effective priority, then done, planned again with one more retry, or failed after
max_attempts, by what became of its run (so a bad task cannot hog the queue)."""

from __future__ import annotations

from datetime import datetime, timedelta

from dagster import DagsterRunStatus, RunRequest

from visibility_assets.config import VisibilityConfig
from visibility_assets.core.jobs import NIGHTLY_JOB, TASK_TAG
from visibility_assets.core.partitions import partition_key, partition_tags
from visibility_assets.events.model import DONE, FAILED, PLANNED, REQUESTED, Task
from visibility_assets.events.priority import effective_priority

PRIORITY_TAG = "dagster/priority"
# A task marked requested whose run never appeared (the tick failed after storing it) is planned again.
LAUNCH_GRACE = timedelta(minutes=10)
ENDED = {DagsterRunStatus.SUCCESS, DagsterRunStatus.FAILURE, DagsterRunStatus.CANCELED}


def task_run_request(task: Task) -> RunRequest:
    day = task.date.isoformat()
    return RunRequest(
        run_key=f"task-{task.task_id}-{task.retries}",
        job_name=NIGHTLY_JOB,
        partition_key=str(partition_key(day, task.platform)),
        tags={**partition_tags(day, task.platform), TASK_TAG: task.task_id, PRIORITY_TAG: str(task.effective_priority),
              "visibility/task_kind": task.kind},
        run_config={"ops": {"raw_ai_responses": {"config": {"task_id": task.task_id}}}},
    )


def count_failed_run(task: Task, max_attempts: int, what: str, now: datetime) -> None:
    """A run of the task failed (or died): back to the queue with the attempt counted, or
    failed after max_attempts."""
    task.retries += 1
    if task.retries >= max_attempts:
        task.move(FAILED, now, f"{what}; {task.retries} attempts, giving up")
    else:
        task.move(PLANNED, now, f"{what}; retry {task.retries}")


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
        else:
            count_failed_run(task, weights.max_attempts, f"run {run_id} {status.value.lower()}", now)
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
