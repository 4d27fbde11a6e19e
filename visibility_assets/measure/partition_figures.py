"""A partition's collection figures over all its runs, as int_partition_requests defines them,
computed for one partition on a reading connection: the raw asset shows them in Dagster right
after it publishes, before the models are built, and they are the model's own, not a second
definition of attempts, retries or searches."""

from __future__ import annotations

from datetime import date as Date

import duckdb

from visibility_assets.core.partitions import Partition
from visibility_assets.measure.project import Model, SqlProject
from visibility_assets.warehouse.db import fill_run_partitions
from visibility_assets.warehouse.tables import TABLES

MODEL = "int_partition_requests"


def partition_figures_of(project: SqlProject):
    """partition_figures with the model of the project the code location loaded: read once, so
    that a fault in the project's files fails the location at load, not each collection step
    (whose retry policy would retry it for minutes)."""
    model = project.models[MODEL]
    return lambda conn, date, platform: partition_figures(conn, model, date, platform)


def partition_figures(conn: duckdb.DuckDBPyConnection, model: Model, date: str, platform: str) -> dict:
    """The model's row for the partition, by column; {} when no collection table holds it."""
    present = {name for (name,) in conn.execute(
        "SELECT table_name FROM information_schema.tables WHERE table_catalog = current_database()"
        " AND table_schema = current_schema()").fetchall()}
    standins = [name for name in model.sources if name not in present]
    for name in standins:  # a table no run has written yet (collection_tasks): empty, as the runner makes it
        conn.execute(TABLES[name].ddl(temporary=True))
    try:
        fill_run_partitions(conn, [Partition(Date.fromisoformat(date), platform)])
        cursor = conn.execute(model.compiled())
        row = cursor.fetchone()
        return dict(zip([c[0] for c in cursor.description], row)) if row else {}
    finally:  # the connection may be used again once the lake has the table: it must not be shadowed
        for name in standins:
            conn.execute("DROP TABLE IF EXISTS temp.main." + name)
