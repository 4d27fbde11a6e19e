"""Events into tasks: merged within a window, numbered after the rounds a day already has,
and cut to the platform's daily budget of extra requests. Pure: the sensor and `visibility ask`
read the state, call plan_tasks, and store what it returns in one transaction."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import date, datetime, timedelta

from visibility_assets.config import VisibilityConfig
from visibility_assets.events.model import FAILED, MERGED, NEW_TASK, OVER_BUDGET, Event, Task, stable_id
from visibility_assets.events.priority import sla_deadline, urgency


@dataclass
class DayState:
    """What one (date, platform) holds already: its highest round, and its extra tasks' requests."""
    last_round: int = 0
    extra_requests: int = 0
    tasks: list[Task] = field(default_factory=list)


@dataclass
class Plan:
    events: list[Event] = field(default_factory=list)
    new_tasks: list[Task] = field(default_factory=list)
    changed_tasks: list[Task] = field(default_factory=list)


def plan_tasks(config: VisibilityConfig, events: list[Event], tasks: list[Task],
               journal_rounds: dict[tuple[date, str], int], now: datetime) -> Plan:
    """Turn new events into new tasks, or merge them into a task of the same platform, day,
    category and kind created within the merge window. `tasks` are the stored tasks of the
    days the events concern; `journal_rounds` the highest round each (day, platform) asked."""
    days: dict[tuple[date, str], DayState] = {}
    for task in tasks:
        _day(days, config, task.date, task.platform, journal_rounds).tasks.append(task)
    for state in days.values():
        for task in state.tasks:
            _count(state, task)
    plan = Plan(events=events)
    for event in events:
        if not event.collects or event.platform is None:
            continue
        state = _day(days, config, event.date, event.platform, journal_rounds)
        target = _merge_target(state.tasks, event, config, now)
        if target is not None:
            target.event_ids.append(event.event_id)
            target.urgency = max(target.urgency, urgency(event.change, config.events.priority))
            event.outcome, event.task_id = MERGED, target.task_id
            if target not in plan.new_tasks and target not in plan.changed_tasks:
                plan.changed_tasks.append(target)
            continue
        if not event.question_ids and not config.questions_of(event.category):
            continue  # nothing to ask about this category: recorded only
        task = _new_task(config, event, state, now)
        if task is None:
            event.outcome = OVER_BUDGET
            continue
        event.outcome, event.task_id = NEW_TASK, task.task_id
        state.tasks.append(task)
        _count(state, task)
        plan.new_tasks.append(task)
    return plan


def _day(days: dict, config: VisibilityConfig, day: date, platform: str,
         journal_rounds: dict[tuple[date, str], int]) -> DayState:
    if (day, platform) not in days:
        nightly = config.platform(platform).rounds
        days[(day, platform)] = DayState(last_round=max(nightly, journal_rounds.get((day, platform), 0)))
    return days[(day, platform)]


def _count(state: DayState, task: Task) -> None:
    if task.extra:
        state.last_round = max(state.last_round, task.first_round + task.rounds - 1)
        state.extra_requests += task.planned_requests


def _merge_target(tasks: list[Task], event: Event, config: VisibilityConfig, now: datetime) -> Task | None:
    """Only changes merge: an ad-hoc request or added questions name their own questions. A
    change that arrives within the window after its category's task (even a finished one) is
    covered by that task's samples."""
    if event.kind in ("adhoc", "new_questions"):
        return None
    window = timedelta(minutes=config.events.merge_window_minutes)
    candidates = [t for t in tasks if t.kind == event.kind and t.category == event.category
                  and t.state != FAILED and now - t.created_at <= window]
    return max(candidates, key=lambda t: t.created_at, default=None)


def _new_task(config: VisibilityConfig, event: Event, state: DayState, now: datetime) -> Task | None:
    """None when the platform's daily budget of extra requests has no room for one round."""
    platform = config.platform(event.platform)
    question_ids = list(event.question_ids) or [q.id for q in config.questions_of(event.category)]
    weights = config.events.priority
    rounds = event.rounds or config.events.alert_extra_rounds
    first_round = state.last_round + 1
    if event.kind == "new_questions":  # the nightly requests of the day, which it lacked
        rounds, first_round = platform.rounds, 1
    elif event.kind in ("alert", "adhoc", "quality"):
        room = platform.extra_requests_per_day - state.extra_requests
        rounds = min(rounds, room // len(question_ids))
        if rounds < 1:
            return None
    task = Task(
        task_id=stable_id("task", event.event_id), kind=event.kind, date=event.date, platform=event.platform,
        category=event.category, question_ids=question_ids, first_round=first_round, rounds=rounds,
        event_ids=[event.event_id], reason=event.reason, base_priority=weights.base.get(event.kind, 0),
        urgency=urgency(event.change, weights), sla_deadline=sla_deadline(now, weights), created_at=now)
    task.move(task.state, now, f"from event {event.event_id}")
    return task
