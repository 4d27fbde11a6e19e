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
    metadata = lake_metadata(conn)
    if metadata is None:
        return
    specs = conn.execute("SELECT count(*) FROM " + metadata + ".ducklake_partition_info AS p JOIN " + metadata
                         + ".ducklake_table AS t USING (table_id) WHERE t.table_name = $table"
                         " AND t.end_snapshot IS NULL AND p.end_snapshot IS NULL", {"table": table}).fetchone()[0]
    if specs:
        return
    conn.execute("ALTER TABLE " + table + " SET PARTITIONED BY " + MONTHLY_PARTITIONS)


# Of the lake tables named in $tables, those with a live data file whose `date` and `platform`
# statistics could hold a partition of RUN_PARTITIONS (a statistic the catalog lacks could hold
# anything), rows inlined in the catalog, or no such columns at all. DuckLake's statistics are
# text: ISO dates compare as their days do. Formatted with the lake's metadata catalog (its name
# is the lake's alias, ours).
TABLES_HOLDING = """
WITH wanted AS (
    SELECT table_id, table_name FROM {metadata}.ducklake_table
    WHERE end_snapshot IS NULL AND list_contains($tables, table_name)
),
keys AS (
    SELECT c.table_id, c.column_id, c.column_name FROM {metadata}.ducklake_column AS c
    SEMI JOIN wanted USING (table_id)
    WHERE c.end_snapshot IS NULL AND c.column_name IN ('date', 'platform')
),
ranges AS (
    SELECT f.table_id,
           any_value(s.min_value) FILTER (WHERE k.column_name = 'date') AS first_date,
           any_value(s.max_value) FILTER (WHERE k.column_name = 'date') AS last_date,
           any_value(s.min_value) FILTER (WHERE k.column_name = 'platform') AS first_platform,
           any_value(s.max_value) FILTER (WHERE k.column_name = 'platform') AS last_platform
    FROM {metadata}.ducklake_data_file AS f
    JOIN keys AS k USING (table_id)
    LEFT JOIN {metadata}.ducklake_file_column_stats AS s ON s.data_file_id = f.data_file_id AND s.column_id = k.column_id
    WHERE f.end_snapshot IS NULL
    GROUP BY f.table_id, f.data_file_id
)
SELECT table_name FROM wanted
WHERE table_id NOT IN (SELECT table_id FROM keys GROUP BY table_id HAVING count(*) = 2)
   OR table_id IN (SELECT table_id FROM {metadata}.ducklake_inlined_data_tables)
   OR table_id IN (
       SELECT r.table_id FROM ranges AS r JOIN """ + RUN_PARTITIONS + """ AS p
         ON coalesce(r.first_date <= CAST(p.date AS VARCHAR), true)
        AND coalesce(r.last_date >= CAST(p.date AS VARCHAR), true)
        AND coalesce(r.first_platform <= p.platform, true)
        AND coalesce(r.last_platform >= p.platform, true))
"""


def tables_holding(conn: duckdb.DuckDBPyConnection, tables: Sequence[str]) -> set[str]:
    """Those of the tables that may hold a row of a partition in RUN_PARTITIONS (filled by the
    caller), from the lake catalog's file statistics, read once; every table in a plain DuckDB.
    Ask it at the start of the transaction, before the tables are written: a file written in the
    transaction is not in the catalog yet.

    A DELETE of a partition no file holds still had DuckLake list the table's files once other
    platforms had written that day (5-8 ms a table, ~27 tables a partition a night); one read of
    the catalog answers for them all."""
    metadata = lake_metadata(conn)
    if metadata is None or not tables:
        return set(tables)
    sql = TABLES_HOLDING.replace("{metadata}", metadata)
    return {name for (name,) in conn.execute(sql, {"tables": list(tables)}).fetchall()}


def delete_run_partitions(conn: duckdb.DuckDBPyConnection, table: str, holding: set[str] | None = None) -> None:
    """Delete the table's rows of the partitions in RUN_PARTITIONS, unless `holding`
    (tables_holding, asked at the start of the transaction) says none of its files holds one."""
    if holding is None or table in holding:
        conn.execute("DELETE FROM " + table + " WHERE " + IN_RUN_PARTITIONS).fetchall()


def lake_metadata(conn: duckdb.DuckDBPyConnection) -> str | None:
    """The metadata catalog of the lake the connection uses; None in a plain DuckDB."""
    database, kind = conn.execute("SELECT database_name, type FROM duckdb_databases()"
                                  " WHERE database_name = current_database()").fetchone()
    # DuckLake names its metadata catalog after the lake's alias (ours, not input): no parameter can name a catalog.
    return "__ducklake_metadata_" + database if kind == "ducklake" else None


def table_fact(table: Table) -> str:
    """What schema_cache records once the table is seen with every column of its schema."""
    return "table " + table.name + " " + ",".join(table.columns)


def insert_batch(conn: duckdb.DuckDBPyConnection, table: Table, batch) -> None:
    """Append an Arrow table of the table's columns: DuckDB ingests Arrow in bulk (executemany
    goes row by row, ~50x slower)."""
    insert_arrow(conn, table.name, batch)


def insert_arrow(conn: duckdb.DuckDBPyConnection, table: str, batch) -> None:
    """Append an Arrow table to the (validated) table, its columns matched by name."""
    if batch.num_rows:
        conn.register("insert_batch", batch)
        conn.execute("INSERT INTO " + table + " BY NAME SELECT * FROM insert_batch")
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
