"""The rows a step of incremental models builds, held in temporary tables of its connection.

An incremental model's rows of the run's partitions are built into a temporary table, tested
there and then written: the tests read no lake table (each read of one costs a catalog query).
Models that read another model's rows of the run through {{ run_rows('name') }} find them in a
temporary table too (RunRows), computed once for the step or kept from the model it has built.

A short run's models are built before its writer takes its turn (stage_models): on a read-only
connection, in one snapshot, while other platforms' steps write; the turn then only deletes and
inserts what was staged (write_staged). Six platforms' steps used to build their models one
after another, each holding the only turn to write for the whole of its build.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import duckdb
import pyarrow as pa

from visibility_assets.measure.model_tests import failing_counts_of
from visibility_assets.measure.project import Model, SqlProject, run_rows_table
from visibility_assets.warehouse.db import RUN_PARTITIONS, bind, delete_run_partitions, insert_arrow

BUILT_ROWS = "built_rows"  # a temporary table: an incremental model's rows of the run, before they are written


class RunRows:
    """The run's rows of the models that a step's models read through {{ run_rows('name') }}, as
    temporary tables: each computed once for the step, or kept from the model the step has just
    built (its built rows are those rows). A view over four lake tables was read by four models,
    each read a catalog query per table and the same join again."""

    def __init__(self, conn: duckdb.DuckDBPyConnection, project: SqlProject, models: Sequence[Model], run_id: str):
        self.conn, self.project, self.run_id = conn, project, run_id
        self.wanted = {name for model in models for name in model.run_reads}
        self.ready: set[str] = set()

    def provide(self, model: Model) -> None:
        """The run's rows of every model `model` reads through run_rows, for RUN_PARTITIONS."""
        for name in model.run_reads:
            if name in self.ready:
                continue
            read = self.project.models.get(name)
            relation = "(" + read.compiled() + ")" if read is not None and read.kind == "ephemeral" else name
            sql = ("CREATE OR REPLACE TEMP TABLE " + run_rows_table(name) + " AS SELECT * FROM " + relation + " AS "
                   + name + " SEMI JOIN " + RUN_PARTITIONS + " USING (date, platform)")
            self.conn.execute(sql, bind(sql, {"run_id": self.run_id}))
            self.ready.add(name)

    def keep(self, model: Model, built: str = BUILT_ROWS) -> None:
        """`built`, the model's rows just built, kept when a later model reads them."""
        if built == run_rows_table(model.name):
            self.ready.add(model.name)
        elif model.name in self.wanted:
            self.conn.execute("CREATE OR REPLACE TEMP TABLE " + run_rows_table(model.name) + " AS FROM " + built)
            self.ready.add(model.name)


def build_rows(conn: duckdb.DuckDBPyConnection, model: Model, run_id: str, run_rows: RunRows | None = None,
               into: str = BUILT_ROWS) -> tuple[int, dict[str, int]]:
    """The incremental model's rows of the partitions in RUN_PARTITIONS (filled by the caller) as
    the temporary table `into`, and its tests' failing rows among them. With `run_rows`, what it
    reads through run_rows comes from there."""
    if run_rows is not None:
        run_rows.provide(model)
    body = model.compiled(run_rows_tables=run_rows is not None)
    # One statement for the whole run; rows outside the run's partitions are not its to write.
    conn.execute("CREATE OR REPLACE TEMP TABLE " + into + " AS SELECT * FROM (" + body + ") SEMI JOIN "
                 + RUN_PARTITIONS + " USING (date, platform)", bind(body, {"run_id": run_id}))
    rows = conn.execute("SELECT count(*) FROM " + into).fetchone()[0]
    if run_rows is not None:
        run_rows.keep(model, into)
    return rows, failing_counts_of(conn, model, into)


@dataclass(frozen=True)
class StagedRows:
    """An incremental model's rows of the run, built before the write, and its tests' failing rows."""
    rows: pa.Table
    failing: dict[str, int]


def stage_models(conn: duckdb.DuckDBPyConnection, project: SqlProject, models: Sequence[Model],
                 run_id: str) -> dict[str, StagedRows]:
    """The incremental `models` (in dependency order) built over the connection's snapshot, for
    the partitions in RUN_PARTITIONS (filled by the caller), without writing to the lake.

    Each later model reads an earlier one's table as it will be once written: a temporary view of
    the same name, which DuckDB resolves before the lake's table, holds the lake's rows of the
    other partitions and the staged rows of the run's (the alert baselines of a run of several
    days read its earlier days). The views are dropped before it returns."""
    database = conn.execute("SELECT current_database(), current_schema()").fetchone()
    run_rows = RunRows(conn, project, models, run_id)
    staged, shadows = {}, []
    try:
        for model in models:
            table = run_rows_table(model.name)
            _, failing = build_rows(conn, model, run_id, run_rows, into=table)
            lake_table = ".".join('"' + part.replace('"', '""') + '"' for part in (*database, model.name))
            conn.execute("CREATE OR REPLACE TEMP VIEW " + model.name + " AS SELECT * FROM " + lake_table + " ANTI JOIN "
                         + RUN_PARTITIONS + " USING (date, platform) UNION ALL BY NAME SELECT * FROM " + table)
            shadows.append(model.name)
            staged[model.name] = StagedRows(conn.execute("FROM " + table).fetch_arrow_table(), failing)
    finally:
        for name in shadows:
            conn.execute("DROP VIEW IF EXISTS temp.main." + name)
    return staged


def write_staged(conn: duckdb.DuckDBPyConnection, model: Model, staged: StagedRows,
                 holding: set[str] | None) -> tuple[int, dict[str, int]]:
    """The staged rows written in place of the model's rows of the run's partitions (in
    RUN_PARTITIONS); with `holding` (tables_holding), deleted only where a file may hold some."""
    delete_run_partitions(conn, model.name, holding)
    insert_arrow(conn, model.name, staged.rows)
    return staged.rows.num_rows, staged.failing
