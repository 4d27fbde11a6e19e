"""A model's YAML tests as SQL: the rows (or groups) of a relation that break each, counted in one
statement that reads the relation once."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import date, timedelta

import duckdb

from visibility_assets.core.partitions import Partition
from visibility_assets.measure.project import Model, ModelTest
from visibility_assets.warehouse.db import IN_RUN_PARTITIONS, bind, fill_run_partitions, has_tables
from visibility_assets.warehouse.tables import CLEANED_SAMPLES

# A view made before is tested after each night over its rows of this many days before its latest.
RECENT_DAYS = 7


def failing_rows(conn: duckdb.DuckDBPyConnection, model: Model, test: ModelTest,
                 partitions: Sequence[Partition] | None = None) -> int:
    """How many rows (or groups, for unique) break the test, within the partitions if given."""
    sql, params = _test_query(test, _tested_rows(conn, model, partitions), "values")
    return conn.execute(sql, bind(sql, params)).fetchone()[0]


def failing_counts(conn: duckdb.DuckDBPyConnection, model: Model,
                   partitions: Sequence[Partition] | None = None, recent_since: date | None = None) -> dict[str, int]:
    """failing_rows of every test of the model in one statement that reads its rows once: a
    query on the lake costs ~15 ms before it reads anything, and the models have ~50 tests.
    `recent_since`, for a view made before: only its rows from that day on (see recent_rows)."""
    relation, params = recent_rows(conn, model, recent_since) if recent_since else (None, {})
    return failing_counts_of(conn, model, relation or _tested_rows(conn, model, partitions), params)


def recent_tests_since(conn: duckdb.DuckDBPyConnection) -> date | None:
    """RECENT_DAYS days before the newest cleaned sample's day: where the after-night view tests
    start. None when nothing was cleaned."""
    if not has_tables(conn, CLEANED_SAMPLES.name):
        return None
    newest = conn.execute("SELECT max(date) FROM " + CLEANED_SAMPLES.name).fetchone()[0]
    return newest - timedelta(days=RECENT_DAYS) if newest else None


def recent_rows(conn: duckdb.DuckDBPyConnection, model: Model, since: date) -> tuple[str | None, dict]:
    """A view's rows from `since` on (by its `date`, or the weeks that start from then, by its
    `week`) and the parameter that bounds them; None when it has neither column. A view is only a
    definition: tested over all its rows when it is made, and after each night over the days that
    night can have changed, where all history grew the after-night run with every night (the
    incremental models it reads test each partition as it is built). The bound is a parameter,
    known when DuckDB plans the statement, so the view's readings of its tables skip the other
    days' files; the view's own newest day would have had it computed over all history first."""
    columns = {row[0] for row in conn.execute("DESCRIBE SELECT * FROM " + model.name).fetchall()}
    column = next((name for name in ("date", "week") if name in columns), None)
    if column is None:
        return None, {}
    bound = "$recent_since" if column == "date" else "date_trunc('week', $recent_since)"
    return "(SELECT * FROM " + model.name + " WHERE " + column + " >= " + bound + ")", {"recent_since": since}


def failing_counts_of(conn: duckdb.DuckDBPyConnection, model: Model, relation: str,
                       params: dict | None = None) -> dict[str, int]:
    if not model.tests:
        return {}
    counts, params = [], dict(params or {})
    for index, test in enumerate(model.tests):
        sql, values = _test_query(test, "tested", f"values_{index}")
        counts.append("(" + sql + ")")
        params.update(values)
    sql = ("WITH tested AS MATERIALIZED (SELECT * FROM " + relation + ") SELECT "
           + ", ".join(counts))
    row = conn.execute(sql, bind(sql, params)).fetchone()
    return {test.name: count for test, count in zip(model.tests, row)}


def _tested_rows(conn: duckdb.DuckDBPyConnection, model: Model, partitions: Sequence[Partition] | None) -> str:
    if partitions is not None and model.partitioned:
        fill_run_partitions(conn, partitions)
        return "(SELECT * FROM " + model.name + " WHERE " + IN_RUN_PARTITIONS + ")"
    return model.name


def _test_query(test: ModelTest, relation: str, values_name: str) -> tuple[str, dict]:
    """The count of rows (groups, for unique) of `relation` that break the test, and its parameters."""
    if test.kind == "not_null":
        return "SELECT count(*) FROM " + relation + " WHERE " + " OR ".join(c + " IS NULL" for c in test.columns), {}
    if test.kind == "unique":
        columns = ", ".join(test.columns)
        return ("SELECT count(*) FROM (SELECT " + columns + " FROM " + relation + " GROUP BY " + columns
                + " HAVING count(*) > 1)"), {}
    if test.kind == "accepted_values":
        column = test.columns[0]
        return ("SELECT count(*) FROM " + relation + " WHERE " + column + " IS NOT NULL AND NOT list_contains($"
                + values_name + ", " + column + ")"), {values_name: list(test.values)}
    return "SELECT count(*) FROM " + relation + " WHERE NOT coalesce((" + test.expression + "), false)", {}
