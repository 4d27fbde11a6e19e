"""The tables Python writes that models read, each created empty when a model runs before them
(a fresh warehouse, a partition never collected by an event-driven task, no replay yet)."""

from __future__ import annotations

import duckdb

from visibility_assets.warehouse.db import ensure_table
from visibility_assets.warehouse.tables import TABLES


def ensure_sources(conn: duckdb.DuckDBPyConnection, refs: tuple[str, ...]) -> None:
    for name in refs:
        if name in TABLES:
            ensure_table(conn, TABLES[name])
