"""DuckDB helpers shared by the warehouse, the SQL model runner and the collection journal."""

import re
from collections.abc import Sequence
from contextlib import contextmanager

import duckdb

from visibility_assets.core.partitions import Partition
from visibility_assets.warehouse import schema_cache
from visibility_assets.warehouse.schema import Table, column_ddl

PARAMETER = re.compile(r"\$([A-Za-z_][A-Za-z0-9_]*)")
RUN_PARTITIONS = "run_partitions"  # a temporary table (date, platform): the partitions being written
IN_RUN_PARTITIONS = "(date, platform) IN (SELECT date, platform FROM " + RUN_PARTITIONS + ")"


@contextmanager
def transaction(conn: duckdb.DuckDBPyConnection):
    """BEGIN, then COMMIT, or ROLLBACK when the block raises."""
    conn.execute("BEGIN TRANSACTION")
    try:
        yield conn
    except BaseException:
        conn.execute("ROLLBACK")
        raise
    conn.execute("COMMIT")


def bind(sql: str, params: dict) -> dict | None:
    """The named parameters the statement uses (DuckDB rejects unused ones)."""
    used = {name: params[name] for name in dict.fromkeys(PARAMETER.findall(sql))}
    return used or None


def fill_run_partitions(conn: duckdb.DuckDBPyConnection, partitions: Sequence[Partition]) -> None:
    """The partitions as the temporary table RUN_PARTITIONS, so that a statement can select or
    delete all of them at once (WHERE IN_RUN_PARTITIONS, or SEMI JOIN run_partitions)."""
    conn.execute("CREATE OR REPLACE TEMP TABLE " + RUN_PARTITIONS + " AS SELECT CAST(unnest($dates) AS DATE)"
                 " AS date, unnest($platforms) AS platform",
                 {"dates": [date for date, _ in partitions], "platforms": [platform for _, platform in partitions]})


def ensure_table(conn: duckdb.DuckDBPyConnection, table: Table) -> None:
    """Create the table, or add the columns a newer schema has (optional ones: older rows get NULL);
    nothing to ask once this process has seen it with them (schema_cache.py)."""
    fact = table_fact(table)
    if schema_cache.knows(conn, fact):
        return
    conn.execute(table.ddl())
    present = {name for (name,) in conn.execute(
        "SELECT column_name FROM information_schema.columns WHERE table_catalog = current_database()"
        " AND table_schema = current_schema() AND table_name = ?", [table.name]).fetchall()}
    for field in table.fields:
        if field.name not in present:
            conn.execute("ALTER TABLE " + table.name + " ADD COLUMN " + column_ddl(field))
    if "date" in table.columns:
        partition_by_month(conn, table.name)
    schema_cache.learn(conn, fact, "exists " + table.name)


# A table with a `date` column keeps each month's rows in files of their own: the nightly merge
# then never joins a month to the next (it rewrote a table's one file of all history every
# night), and a night's statements, which read their own days and a baseline of a week, skip
# the files of every other month by their date statistics (a join to run_partitions prunes them
# too: DuckDB passes the join's date range to the scan), where one merged file of all history
# was read whole by every night.
MONTHLY_PARTITIONS = "(year(date), month(date))"


def partition_by_month(conn: duckdb.DuckDBPyConnection, table: str) -> None:
    """Partition a lake table by the month of its `date` unless it is partitioned already (a
    table made by an earlier version: its older files stay as they are, the new ones are
    partitioned). Nothing to do in a plain DuckDB (the tests' and tools' in-memory ones)."""
    database, kind = conn.execute("SELECT database_name, type FROM duckdb_databases()"
                                  " WHERE database_name = current_database()").fetchone()
    if kind != "ducklake":
        return
    # DuckLake names its metadata catalog after the lake's alias (ours, not input): no parameter can name a catalog.
    metadata = "__ducklake_metadata_" + database
    specs = conn.execute("SELECT count(*) FROM " + metadata + ".ducklake_partition_info AS p JOIN " + metadata
                         + ".ducklake_table AS t USING (table_id) WHERE t.table_name = $table"
                         " AND t.end_snapshot IS NULL AND p.end_snapshot IS NULL", {"table": table}).fetchone()[0]
    if specs:
        return
    conn.execute("ALTER TABLE " + table + " SET PARTITIONED BY " + MONTHLY_PARTITIONS)


def table_fact(table: Table) -> str:
    """What schema_cache records once the table is seen with every column of its schema."""
    return "table " + table.name + " " + ",".join(table.columns)


def insert_batch(conn: duckdb.DuckDBPyConnection, table: Table, batch) -> None:
    """Append an Arrow table of the table's columns: DuckDB ingests Arrow in bulk (executemany
    goes row by row, ~50x slower)."""
    if batch.num_rows:
        conn.register("insert_batch", batch)
        conn.execute("INSERT INTO " + table.name + " BY NAME SELECT * FROM insert_batch")
        conn.unregister("insert_batch")


def existing_tables(conn: duckdb.DuckDBPyConnection) -> set[str]:
    """The tables and views of the lake now."""
    names = {name for (name,) in conn.execute(
        "SELECT table_name FROM information_schema.tables WHERE table_catalog = current_database()"
        " AND table_schema = current_schema()").fetchall()}
    schema_cache.learn(conn, *("exists " + name for name in names))
    return names


def has_tables(conn: duckdb.DuckDBPyConnection, *names: str, recheck_absent_s: float | None = None) -> bool:
    """Whether the lake has all these tables (or views): asked of the catalog until they are seen;
    with recheck_absent_s, one seen missing is asked again only after that long."""
    facts = ["exists " + name for name in names]
    if all(schema_cache.knows(conn, fact) for fact in facts):
        return True
    if recheck_absent_s is not None and any(schema_cache.absent_lately(conn, f, recheck_absent_s) for f in facts):
        return False
    found = set(names) <= existing_tables(conn)
    if not found and recheck_absent_s is not None:
        for fact in facts:
            if not schema_cache.knows(conn, fact):
                schema_cache.learn_absent(conn, fact)
    return found
