"""The order tasks run in: one formula, written once (docs/events.md).

    effective = base[kind] + urgency + sla - min(retry_penalty x retries, retry_penalty_cap)

- urgency: the size of the change, `urgency_per_point` per percentage point, up to `urgency_cap`;
- sla: 0 when the task is planned, growing linearly to `sla_max` at its deadline (the event plus
  `sla_hours`), and `sla_max` after it;
- the retry penalty is capped, so a task that keeps failing sinks below fresh work of its kind
  but never forever; after `max_attempts` it fails and leaves the queue.

The result goes into the run's `dagster/priority` tag: the run queue starts higher values first,
within the per-platform run limit. Nightly and backfill runs carry priority 0.
"""

from __future__ import annotations

from datetime import datetime, timedelta

from visibility_assets.config.events import PriorityWeights
from visibility_assets.events.model import Task


def urgency(change: float | None, weights: PriorityWeights) -> int:
    if change is None:
        return 0
    return min(weights.urgency_cap, round(abs(change) * 100 * weights.urgency_per_point))


def sla_deadline(created_at: datetime, weights: PriorityWeights) -> datetime:
    return created_at + timedelta(hours=weights.sla_hours)


def sla_term(task: Task, now: datetime, weights: PriorityWeights) -> int:
    window = (task.sla_deadline - task.created_at).total_seconds()
    elapsed = (now - task.created_at).total_seconds()
    if window <= 0 or elapsed >= window:
        return weights.sla_max
    return round(weights.sla_max * max(0.0, elapsed) / window)


def retry_penalty(retries: int, weights: PriorityWeights) -> int:
    return min(weights.retry_penalty * retries, weights.retry_penalty_cap)


def effective_priority(task: Task, now: datetime, weights: PriorityWeights) -> int:
    return task.base_priority + task.urgency + sla_term(task, now, weights) - retry_penalty(task.retries, weights)
