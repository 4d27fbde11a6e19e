"""Events and tasks against the warehouse: each step reads, decides (planner.py) and writes
in one lake transaction, so two sensor ticks or two `visibility ask` never plan the same
thing twice (a conflicting commit is retried on the new state)."""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta

import duckdb

from visibility_assets.config import VisibilityConfig
from visibility_assets.events import store
from visibility_assets.events.detect import QUALITY_FIGURES, alert_events, new_question_events, quality_events
from visibility_assets.events.model import Event, Task
from visibility_assets.events.planner import Plan, plan_tasks
from visibility_assets.warehouse.db import has_tables
from visibility_assets.warehouse.resource import WarehouseResource

ALERT_COLUMNS = ("date", "platform", "kind", "category", "subject", "direction", "decision", "rate", "rate_low",
                 "rate_high", "baseline_rate", "change", "p_value", "q_value")


def detect_and_plan(warehouse: WarehouseResource, config: VisibilityConfig, now: datetime) -> Plan:
    """New events from the alerts and questions.yaml of the latest collected days (the newest
    day minus max_event_age_days: a re-analysis of old days asks for nothing), merged into
    tasks and stored."""
    def work(conn: duckdb.DuckDBPyConnection) -> Plan:
        store.ensure(conn)
        newest = store.newest_day(conn)
        if newest is None:
            return Plan()
        since = newest - timedelta(days=config.events.max_event_age_days)
        known = store.known_event_ids(conn, since)
        found = alert_events(_recent_alerts(conn, since), now)
        found += new_question_events(config, store.asked_questions(conn, since), now)
        found += quality_events(_quality_figures(conn, since), now)
        events = [e for e in dict((e.event_id, e) for e in found).values() if e.event_id not in known]
        return _plan_and_save(conn, config, events, since, now)

    return warehouse.write(work)[0]


def record_events(warehouse: WarehouseResource, config: VisibilityConfig, events: list[Event],
                  now: datetime) -> Plan:
    """Events from outside (a person asking, an analyzer upgrade): recorded and planned. An
    event already known (a retried launch) plans nothing new; its task is returned."""
    def work(conn: duckdb.DuckDBPyConnection) -> Plan:
        store.ensure(conn)
        since = min(e.date for e in events)
        known = store.known_event_ids(conn, since)
        plan = _plan_and_save(conn, config, [e for e in events if e.event_id not in known], since, now)
        retried = {e.event_id for e in events if e.event_id in known}
        if retried:
            plan.new_tasks += [t for t in store.tasks_since(conn, since) if retried & set(t.event_ids)]
        return plan

    return warehouse.write(work)[0]


def _plan_and_save(conn: duckdb.DuckDBPyConnection, config: VisibilityConfig, events: list[Event], since: date,
                   now: datetime) -> Plan:
    relevant = [e for e in events if e.platform in config.platform_names or e.platform is None]
    plan = plan_tasks(config, relevant, store.tasks_since(conn, since), store.journal_rounds(conn, since), now)
    store.save_plan(conn, plan)
    return plan


def _recent_alerts(conn: duckdb.DuckDBPyConnection, since: date) -> list[dict]:
    if not has_tables(conn, "fct_visibility_alerts"):
        return []
    return conn.execute("SELECT " + ", ".join(ALERT_COLUMNS) + " FROM fct_visibility_alerts WHERE date >= $since"
                        " ORDER BY date, platform, p_value", {"since": since}).fetch_arrow_table().to_pylist()


QUALITY_TRAILING = """
SELECT date, platform, figure, value, baseline, baseline_days FROM (
    SELECT date, platform, figure, value,
           avg(value) OVER week AS baseline, count(value) OVER week AS baseline_days
    FROM (SELECT date, platform, avg(parse_success) AS parse_success, avg(success_share) AS success_share
          FROM fct_collection_quality GROUP BY ALL)
    UNPIVOT (value FOR figure IN (parse_success, success_share))
    WINDOW week AS (PARTITION BY platform, figure ORDER BY date RANGE BETWEEN INTERVAL 7 DAY PRECEDING
                    AND INTERVAL 1 DAY PRECEDING)
)
WHERE date >= $since AND list_contains($figures, figure)
"""


def _quality_figures(conn: duckdb.DuckDBPyConnection, since: date) -> list[dict]:
    if not has_tables(conn, "fct_collection_quality"):
        return []
    return conn.execute(QUALITY_TRAILING, {"since": since, "figures": list(QUALITY_FIGURES)}
                        ).fetch_arrow_table().to_pylist()


def load_task(warehouse: WarehouseResource, task_id: str) -> Task | None:
    if not warehouse.exists():
        return None
    with warehouse.read_only() as conn:
        return store.task(conn, task_id)


def open_tasks(warehouse: WarehouseResource) -> list[Task]:
    if not warehouse.exists():
        return []
    with warehouse.read_only() as conn:
        return store.open_tasks(conn)


def save_tasks(warehouse: WarehouseResource, tasks: list[Task]) -> None:
    if tasks:
        warehouse.write(lambda conn: store.save_tasks(conn, tasks))


def move_task(warehouse: WarehouseResource, task_id: str, state: str, note: str, run_id: str | None = None,
              now: datetime | None = None) -> Task | None:
    """One step of a task's life, appended to its history."""
    def work(conn: duckdb.DuckDBPyConnection) -> Task | None:
        task = store.task(conn, task_id)
        if task is not None:
            task.run_id = run_id or task.run_id
            task.move(state, now or datetime.now(UTC), note)
            store.save_tasks(conn, [task])
        return task

    return warehouse.write(work)[0]


def over_budget_message(config: VisibilityConfig, platform: str) -> str:
    budget = config.platform(platform).extra_requests_per_day
    return (f"{platform}'s daily budget of extra requests ({budget}, extra_requests_per_day in platforms.yaml)"
            f" has no room for one round of these questions today")
