"""The tables Python writes that models read, each created empty when a model runs before them
(a fresh warehouse, a partition never collected by an event-driven task, no replay yet)."""

from __future__ import annotations

import duckdb

from ..analyze.replay_record import ANALYZER_REPLAYS
from ..analyze.samples import SCHEMAS as CLEANED_SCHEMAS
from ..events.model import COLLECTION_TASKS
from ..warehouse.db import ensure_table
from ..warehouse.tables import COLLECTION_RUNS, COLLECTION_TABLES, Table

CLEANED_TABLES = tuple(Table(name, tuple(schema)) for name, schema in CLEANED_SCHEMAS.items())
SOURCE_TABLES = (*COLLECTION_TABLES, COLLECTION_RUNS, COLLECTION_TASKS, ANALYZER_REPLAYS, *CLEANED_TABLES)


def ensure_sources(conn: duckdb.DuckDBPyConnection, refs: tuple[str, ...]) -> None:
    for table in SOURCE_TABLES:
        if table.name in refs:
            ensure_table(conn, table)
