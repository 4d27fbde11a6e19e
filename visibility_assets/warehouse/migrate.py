"""Bringing a warehouse of the single-file era (`warehouse.duckdb`) into the lake.

Its tables are copied as they are, in one lake transaction; views are left behind (the SQL
model assets create them again). A table the lake already has is left alone, so running it
twice copies nothing twice.
"""

from __future__ import annotations

from pathlib import Path

import duckdb

from visibility_assets.warehouse.lake import LakeSettings, quote, write_with_retry

OLD = "single_file"


def import_file_warehouse(settings: LakeSettings, path: Path) -> dict[str, int]:
    """Copy the file's tables the lake does not have yet; returns rows copied per table."""
    def copy(conn: duckdb.DuckDBPyConnection) -> dict[str, int]:
        conn.execute("ATTACH " + quote(str(path)) + " AS " + OLD + " (READ_ONLY)")
        try:
            tables = [name for (name,) in conn.execute(
                "SELECT table_name FROM information_schema.tables WHERE table_catalog = $old"
                " AND table_type = 'BASE TABLE' ORDER BY 1", {"old": OLD}).fetchall()]
            present = {name for (name,) in conn.execute(
                "SELECT table_name FROM information_schema.tables WHERE table_catalog = current_database()"
                " AND table_schema = current_schema()").fetchall()}
            copied = {}
            for name in tables:
                if name in present:
                    continue
                source = OLD + '.main."' + name.replace('"', '""') + '"'
                conn.execute('CREATE TABLE "' + name.replace('"', '""') + '" AS SELECT * FROM ' + source)
                copied[name] = conn.execute("SELECT count(*) FROM " + source).fetchone()[0]
            return copied
        finally:
            conn.execute("DETACH " + OLD)

    return write_with_retry(settings, copy)[0]
