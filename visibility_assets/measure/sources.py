"""The tables Python writes that models read, each created empty when a model runs before them
(a fresh warehouse, a partition never collected by an event-driven task, no replay yet).

Which tables are sources is declared once, in dbt_like_sql/staging/sources.yml (project.py
reads it); their columns are warehouse/tables.py's, as for every table."""

from __future__ import annotations

from collections.abc import Sequence

import duckdb

from visibility_assets.warehouse import schema_cache
from visibility_assets.warehouse.db import ensure_table, table_fact
from visibility_assets.warehouse.tables import TABLES


def ensure_sources(conn: duckdb.DuckDBPyConnection, names: Sequence[str]) -> None:
    """Create each source table that is missing, or add the columns a newer schema has; one
    catalog query when they are all there already, none once this process has seen them."""
    missing = [name for name in names if not schema_cache.knows(conn, table_fact(TABLES[name]))]
    if not missing:
        return
    present: dict[str, set[str]] = {}
    for table, column in conn.execute(
            "SELECT table_name, column_name FROM information_schema.columns WHERE table_catalog = current_database()"
            " AND table_schema = current_schema() AND list_contains($names, table_name)",
            {"names": missing}).fetchall():
        present.setdefault(table, set()).add(column)
    for name in missing:
        if set(TABLES[name].columns) <= present.get(name, set()):
            schema_cache.learn(conn, table_fact(TABLES[name]), "exists " + name)
        else:
            ensure_table(conn, TABLES[name])
