"""collection_events and collection_tasks in the warehouse: reads and delete-then-insert writes,
each on a connection inside one warehouse transaction (WarehouseResource.write)."""

from __future__ import annotations

from collections.abc import Iterable
from datetime import date

import duckdb

from visibility_assets.events.model import OPEN_STATES, Task
from visibility_assets.events.planner import Plan
from visibility_assets.warehouse.db import ensure_table, has_tables, insert_batch
from visibility_assets.warehouse.tables import COLLECTION_EVENTS, COLLECTION_TASKS, EVENT_TABLES


def ensure(conn: duckdb.DuckDBPyConnection) -> None:
    for table in EVENT_TABLES:
        ensure_table(conn, table)


def newest_day(conn: duckdb.DuckDBPyConnection) -> date | None:
    """The latest day the collection journal holds."""
    if not has_tables(conn, "journal_requests"):
        return None
    return conn.execute("SELECT max(date) FROM journal_requests").fetchone()[0]


def known_event_ids(conn: duckdb.DuckDBPyConnection, since: date) -> set[str]:
    rows = conn.execute("SELECT event_id FROM collection_events WHERE date >= $since", {"since": since}).fetchall()
    return {event_id for (event_id,) in rows}


def tasks_since(conn: duckdb.DuckDBPyConnection, since: date) -> list[Task]:
    return _tasks(conn, "SELECT * FROM collection_tasks WHERE date >= $since ORDER BY created_at", {"since": since})


def open_tasks(conn: duckdb.DuckDBPyConnection) -> list[Task]:
    return _tasks(conn, "SELECT * FROM collection_tasks WHERE list_contains($open, state) ORDER BY created_at",
                  {"open": list(OPEN_STATES)})


def task(conn: duckdb.DuckDBPyConnection, task_id: str) -> Task | None:
    found = _tasks(conn, "SELECT * FROM collection_tasks WHERE task_id = $id", {"id": task_id})
    return found[0] if found else None


def _tasks(conn: duckdb.DuckDBPyConnection, sql: str, params: dict) -> list[Task]:
    if not has_tables(conn, COLLECTION_TASKS.name):
        return []
    return [Task.from_row(row) for row in conn.execute(sql, params).fetch_arrow_table().to_pylist()]


def journal_rounds(conn: duckdb.DuckDBPyConnection, since: date) -> dict[tuple[date, str], int]:
    """The highest round each (day, platform) has planned in the collection journal."""
    if not has_tables(conn, "journal_requests"):
        return {}
    rows = conn.execute("SELECT date, platform, max(round) FROM journal_requests WHERE date >= $since"
                        " GROUP BY ALL", {"since": since}).fetchall()
    return {(day, platform): rounds for day, platform, rounds in rows}


def asked_questions(conn: duckdb.DuckDBPyConnection, since: date) -> dict[tuple[date, str], set[str]]:
    """The questions each (day, platform) of the journal has asked (or planned)."""
    if not has_tables(conn, "journal_requests"):
        return {}
    rows = conn.execute("SELECT date, platform, list(DISTINCT question_id) FROM journal_requests"
                        " WHERE date >= $since GROUP BY ALL", {"since": since}).fetchall()
    return {(day, platform): set(ids) for day, platform, ids in rows}


def save_plan(conn: duckdb.DuckDBPyConnection, plan: Plan) -> None:
    insert_batch(conn, COLLECTION_EVENTS, COLLECTION_EVENTS.batch([e.row() for e in plan.events]))
    save_tasks(conn, [*plan.new_tasks, *plan.changed_tasks])


def save_tasks(conn: duckdb.DuckDBPyConnection, tasks: Iterable[Task]) -> None:
    tasks = list(tasks)
    if not tasks:
        return
    conn.execute("DELETE FROM collection_tasks WHERE list_contains($ids, task_id)", {"ids": [t.task_id for t in tasks]})
    insert_batch(conn, COLLECTION_TASKS, COLLECTION_TASKS.batch([t.row() for t in tasks]))
