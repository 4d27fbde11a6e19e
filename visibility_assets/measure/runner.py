"""Running models and their tests in DuckDB.

Statements are assembled from the model's validated name and its compiled SQL, the way
dbt renders a materialization; partition values never enter the text: they are bound as
parameters, into the run_partitions table, and so is $run_id.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol, TypeVar

import duckdb

from visibility_assets.core.partitions import Partition
from visibility_assets.measure.model_tests import failing_counts, recent_tests_since
from visibility_assets.measure.project import Model, SqlProject
from visibility_assets.measure.sources import ensure_sources
from visibility_assets.measure.step_rows import BUILT_ROWS, RunRows, StagedRows, build_rows, stage_models, write_staged
from visibility_assets.warehouse import schema_cache
from visibility_assets.warehouse.db import (
    bind,
    delete_run_partitions,
    existing_tables,
    fill_run_partitions,
    has_tables,
    partition_by_month,
    tables_holding,
)

T = TypeVar("T")
RUN_ROWS_MAX_PARTITIONS = 31  # a run of more reads {{ run_rows() }} inline (RunRows) and is not staged


class Warehouse(Protocol):
    def write(self, work: Callable[[duckdb.DuckDBPyConnection], Any]) -> tuple[Any, int | None]:
        """`work` in one transaction; its result and the snapshot the commit made."""

    def read(self, work: Callable[[duckdb.DuckDBPyConnection], T]) -> T:
        """`work` in one read transaction, outside the writers' turn; its result."""


@dataclass(frozen=True)
class ModelBuild:
    rows: int  # rows written (of the run's partitions, for an incremental model)
    failing: dict[str, int]  # each YAML test of the model -> rows (or groups) that break it
    snapshot: int | None


def materialize_models(warehouse: Warehouse, project: SqlProject, models: Sequence[Model],
                       partitions: Sequence[Partition], run_id: str) -> dict[str, ModelBuild]:
    """What the model assets do, for any number of models (in dependency order) in two
    transactions: the views they read made where missing or changed and their tables made
    ready (created, or given the columns their SQL added), committed first so that the build
    can fill them; then every model built and tested. A short run of incremental models builds
    and tests them before the second transaction, outside the writers' turn, which then only
    writes them (step_rows.stage_models). Raises UpstreamMissing when a table one reads was
    never built and is not among them."""
    definitions = view_definition_ids(project)
    remade: set[str] = set()  # views (re)made by this call: their tests read all their rows
    history: dict[str, list[Partition]] = {}  # models whose table this call made: all their partitions

    def prepare(conn: duckdb.DuckDBPyConnection) -> None:
        create_macros(conn, project)
        fill_run_partitions(conn, partitions)  # once: each model's table is made ready for the same ones
        made = view_definitions(conn) if any(m.kind == "view" for m in models) else {}
        remade.update(name for name in definitions if made.get(name) != definitions[name])
        pending = ensure_views(conn, project, run_id, definitions)  # those the models read
        for model in models:
            refuse_missing_tables(conn, project, model)
            ensure_sources(conn, model.sources)  # here: a staged build reads, and cannot create them
            if pending:  # views over a table an earlier model of the step has just made
                pending = ensure_views(conn, project, run_id, definitions)
            if prepare_table(conn, model, partitions, run_id) == CREATED:
                history[model.name] = source_partitions(conn, project, model, partitions)
        if pending:  # and those over the tables just made
            ensure_views(conn, project, run_id, definitions)

    def stage(conn: duckdb.DuckDBPyConnection) -> dict[str, StagedRows]:
        create_macros(conn, project)
        fill_run_partitions(conn, partitions)
        return stage_models(conn, project, models, run_id)

    def build(conn: duckdb.DuckDBPyConnection) -> dict[str, tuple[int, dict[str, int]]]:
        create_macros(conn, project)
        fill_run_partitions(conn, partitions)  # once, but around a new model's history
        # A run of many partitions (a backfill) reads them inline: held whole, they would take
        # hundreds of megabytes, and its few catalog queries are nothing next to its work.
        run_rows = RunRows(conn, project, models, run_id) if len(partitions) <= RUN_ROWS_MAX_PARTITIONS else None
        holding = tables_holding(conn, [model.name for model in models
                                        if model.kind == "incremental" and model.name not in history])
        built = {}
        # The after-night view tests' bound: read once for all views (a query on the lake is not free).
        recent_since = recent_tests_since(conn) if any(
            model.kind == "view" and model.name not in remade for model in models) else None
        for model in models:
            if model.name in staged:
                built[model.name] = write_staged(conn, model, staged[model.name], holding)
            elif model.kind == "incremental" and model.name in history:
                fill_run_partitions(conn, history[model.name])
                built[model.name] = build_partitions(conn, model, run_id)  # all history: inline
                fill_run_partitions(conn, partitions)
            elif model.kind == "incremental" and partitions:
                built[model.name] = build_partitions(conn, model, run_id, run_rows=run_rows, holding=holding)
            else:  # a view is current already: ensure_views made or replaced it in the first transaction
                rows = 0 if model.kind == "view" else build_model(conn, model, partitions, run_id)
                recent = model.kind == "view" and model.name not in remade
                built[model.name] = rows, failing_counts(conn, model, partitions, recent_since if recent else None)
        return built

    warehouse.write(prepare)
    # Staged: a short run whose models all build from tables made before it (a model's first
    # build reads all history, and a view or table is made in the write).
    stageable = (partitions and len(partitions) <= RUN_ROWS_MAX_PARTITIONS and not history
                 and all(model.kind == "incremental" for model in models))
    staged = warehouse.read(stage) if stageable else {}
    built, snapshot = warehouse.write(build)
    return {name: ModelBuild(rows, failing, snapshot) for name, (rows, failing) in built.items()}


def materialize_model(warehouse: Warehouse, project: SqlProject, model: Model, partitions: Sequence[Partition],
                      run_id: str) -> ModelBuild:
    return materialize_models(warehouse, project, [model], partitions, run_id)[model.name]


def create_macros(conn: duckdb.DuckDBPyConnection, project: SqlProject) -> None:
    if project.macros.strip():
        conn.execute(project.macros)


class UpstreamMissing(Exception):
    """A model's input table was never built: the selection left it out on a new warehouse."""


def refuse_missing_tables(conn: duckdb.DuckDBPyConnection, project: SqlProject, model: Model) -> None:
    """Refuse clearly when a table the model reads was never built."""
    read = [name for name in project.upstream_assets(model)
            if name in project.models and project.models[name].kind != "view"]
    if has_tables(conn, *read):
        return
    present = existing_tables(conn)
    tables = [name for name in read if name not in present]
    if tables:
        raise UpstreamMissing(f"{model.name} reads {', '.join(tables)}, never built in this warehouse:"
                              f" materialize {'it' if len(tables) == 1 else 'them'} first, or include"
                              f" {'it' if len(tables) == 1 else 'them'} in the selection")


def ensure_views(conn: duckdb.DuckDBPyConnection, project: SqlProject, run_id: str,
                 definitions: dict[str, str]) -> list[str]:
    """Every view of the project made where it is missing or its definition changed, as soon as
    the tables it reads exist (a view is only its definition): the models read them, and so do
    the report, the workspace and `visibility sql`, without waiting for the view assets' run.
    `definitions`: view_definition_ids of the project. Returns the views left to make: those
    over a table that does not exist yet."""
    facts = {name: "view " + name + " " + definition for name, definition in definitions.items()}
    if all(schema_cache.knows(conn, fact) for fact in facts.values()):
        return []
    present, made = existing_tables(conn), view_definitions(conn)
    pending = []
    for name, definition in definitions.items():
        if made.get(name) == definition:
            schema_cache.learn(conn, facts[name])
            continue
        view = project.models[name]
        reads = [name for name in project.upstream_assets(view) if name in project.models]
        if all(name in present for name in reads):
            build_model(conn, view, [], run_id)
            present.add(view.name)
            schema_cache.learn(conn, facts[name])
        else:
            pending.append(name)
    return pending


def view_definition_ids(project: SqlProject) -> dict[str, str]:
    """Each view of the project (in dependency order) and the definition_id its comment should hold."""
    return {model.name: definition_id(model) for model in project.models.values() if model.kind == "view"}


def definition_id(model: Model) -> str:
    """What a view's comment records: the digest of the SQL it was made from."""
    return "definition " + hashlib.sha256(model.compiled().encode()).hexdigest()[:16]


def view_definitions(conn: duckdb.DuckDBPyConnection) -> dict[str, str | None]:
    return dict(conn.execute("SELECT view_name, comment FROM duckdb_views() WHERE database_name = current_database()"
                             " AND schema_name = current_schema()").fetchall())


def build_model(conn: duckdb.DuckDBPyConnection, model: Model, partitions: Sequence[Partition],
                run_id: str, table_ready: bool = False) -> int:
    """Materialize the model (for incremental ones, each partition); returns rows written.
    `table_ready`: prepare_table has made its table ready in an earlier transaction."""
    if model.kind == "ephemeral":
        return 0  # nothing of its own: the models that read it hold its SQL
    ensure_sources(conn, model.sources)
    body = model.compiled()
    if model.kind == "view":
        conn.execute("CREATE OR REPLACE VIEW " + model.name + " AS " + body)
        # A literal, not a parameter (COMMENT takes none): a validated name and a hex digest.
        conn.execute("COMMENT ON VIEW " + model.name + " IS '" + definition_id(model) + "'")
        return 0
    if model.kind == "table":
        conn.execute("CREATE OR REPLACE TABLE " + model.name + " AS " + body, bind(body, {"run_id": run_id}))
        return conn.execute("SELECT count(*) FROM " + model.name).fetchone()[0]
    if not partitions:
        return 0
    fill_run_partitions(conn, partitions)
    return build_partitions(conn, model, run_id, table_ready)[0]


def build_partitions(conn: duckdb.DuckDBPyConnection, model: Model, run_id: str,
                     table_ready: bool = True, run_rows: RunRows | None = None,
                     holding: set[str] | None = None) -> tuple[int, dict[str, int]]:
    """An incremental model's rows of the partitions in RUN_PARTITIONS (filled by the caller)
    replaced, and its tests' failing rows among them (step_rows.build_rows). With `holding`
    (tables_holding), the old rows are deleted only where a file may hold some. Returns the rows
    written and each test's failing rows."""
    ensure_sources(conn, model.sources)
    if not table_ready:
        body = model.compiled()
        _create_or_widen(conn, model, body, bind(body, {"run_id": run_id}))
    rows, failing = build_rows(conn, model, run_id, run_rows)
    delete_run_partitions(conn, model.name, holding)
    conn.execute("INSERT INTO " + model.name + " BY NAME SELECT * FROM " + BUILT_ROWS)
    return rows, failing


CREATED, WIDENED = "created", "widened"


def prepare_table(conn: duckdb.DuckDBPyConnection, model: Model, partitions: Sequence[Partition],
                  run_id: str) -> str | None:
    """An incremental model's table, created or given the columns its SQL added (its SQL reads
    RUN_PARTITIONS, filled by the caller).

    Returns CREATED, WIDENED (columns were added) or None (it was ready)."""
    if model.kind != "incremental" or not partitions:
        return None
    ensure_sources(conn, model.sources)
    body = model.compiled()
    return _create_or_widen(conn, model, body, bind(body, {"run_id": run_id}))


def _create_or_widen(conn: duckdb.DuckDBPyConnection, model: Model, body: str, params: dict | None) -> str | None:
    """Create the table from the model's columns (CREATED), or append the ones its SQL added
    (WIDENED; each way DuckDB plans the model once); nothing to do (None) once this process has
    seen it so."""
    fact = "model " + model.name + " " + hashlib.sha256(body.encode()).hexdigest()[:16]
    if schema_cache.knows(conn, fact):
        return None
    change = None
    if not has_tables(conn, model.name):
        conn.execute("CREATE TABLE IF NOT EXISTS " + model.name + " AS SELECT * FROM (" + body + ") WHERE false",
                     params)
        change = CREATED
    elif _append_new_columns(conn, model, body, params):
        change = WIDENED
    partition_by_month(conn, model.name)  # an incremental model has a date: its grain starts with it
    schema_cache.learn(conn, fact, "exists " + model.name)
    return change


def source_partitions(conn: duckdb.DuckDBPyConnection, project: SqlProject, model: Model,
                      partitions: Sequence[Partition]) -> list[Partition]:
    """The run's partitions and every (date, platform) the source tables the model reads (through
    the models it reads) hold: a new incremental model's first build fills its history, as dbt's
    first run of an incremental model does, where it would otherwise hold the nights built after
    it was added and the pages reading it would be empty before them."""
    tables = sorted(name for name in _sources_read(project, model) if _has_partition_columns(conn, name))
    selects = ["SELECT DISTINCT date, platform FROM " + name for name in tables]  # validated source names
    found = conn.execute(" UNION ".join(selects)).fetchall() if selects else []
    return sorted({*partitions, *(Partition(*row) for row in found)})


def _sources_read(project: SqlProject, model: Model) -> set[str]:
    found, pending = set(), [model]
    while pending:
        for ref in pending.pop().refs:
            if ref in project.sources:
                found.add(ref)
            elif ref in project.models:
                pending.append(project.models[ref])
    return found


def _has_partition_columns(conn: duckdb.DuckDBPyConnection, table: str) -> bool:
    if not has_tables(conn, table):
        return False
    return {"date", "platform"} <= {row[0] for row in conn.execute("DESCRIBE " + table).fetchall()}


def _append_new_columns(conn: duckdb.DuckDBPyConnection, model: Model, body: str, params: dict | None) -> bool:
    """A column added to an incremental model is added to its table (older partitions get NULL
    until they are rebuilt), as dbt's on_schema_change='append_new_columns' does."""
    wanted = conn.execute("DESCRIBE SELECT * FROM (" + body + ") WHERE false", params).fetchall()
    present = {row[0] for row in conn.execute("DESCRIBE " + model.name).fetchall()}
    added = False
    for name, column_type, *_ in wanted:
        if name not in present:
            conn.execute("ALTER TABLE " + model.name + ' ADD COLUMN "' + name.replace('"', '""') + '" ' + column_type)
            added = True
    return added
