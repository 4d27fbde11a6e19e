"""`visibility sql`: a read-only query against the warehouse, or the SQL that attaches it.

Read-only for real: the query must be one SELECT (DuckDB's own parser says what it is, and
only a SELECT serializes to its JSON form, which a PRAGMA dressed as a SELECT does not), it may
call none of the functions that reach past the lake (the sqlite extension's readers of any
SQLite file, DuckLake's maintenance calls, SQL run from a string), and it runs on a reader
sealed against every other file, whose settings it cannot change (open_sealed_reader).
"""

from __future__ import annotations

import csv
import json
import sys
from collections.abc import Iterator
from datetime import date, datetime
from decimal import Decimal

import duckdb

from visibility_assets.cli.arguments import UserError
from visibility_assets.cli.lake_reader import first_line, read_warehouse
from visibility_assets.warehouse.lake import attach_statements, extension_directory, lake_settings, quote

FORMATS = ("table", "csv", "json")
# DuckLake's functions that only read; every other ducklake_* call maintains or changes the lake.
DUCKLAKE_READERS = frozenset({"ducklake_snapshots", "ducklake_table_info", "ducklake_list_files",
                              "ducklake_table_changes", "ducklake_table_insertions", "ducklake_table_deletions"})
# Functions that run SQL given as a string: what they run is not the query that was checked.
SQL_FROM_STRINGS = frozenset({"query", "query_table", "json_execute_serialized_sql"})


def add_parser(commands) -> None:
    sql = commands.add_parser("sql", help="a read-only query against the warehouse")
    sql.add_argument("query", nargs="?", help='e.g. "SELECT platform, count(*) FROM raw_ai_responses GROUP BY 1"')
    sql.add_argument("--format", choices=FORMATS, default="table")
    sql.add_argument("--as-of", metavar="SNAPSHOT|TIMESTAMP",
                     help="read the warehouse as it was: a snapshot id or a time (2026-11-30 08:00:00+08)")
    sql.add_argument("--print-attach", action="store_true",
                     help="print the SQL that attaches the warehouse read-only from a DuckDB client")
    sql.set_defaults(handler=run)


def run(args) -> int:
    if args.print_attach:
        print(attach_sql())
        return 0
    if not args.query:
        raise UserError("give a query, or --print-attach")
    with read_warehouse(args.as_of, sealed=True) as conn:
        try:
            refuse_all_but_a_select(conn, args.query)
            cursor = conn.execute(args.query)
        except duckdb.Error as exc:
            raise UserError(first_line(exc)) from None
        if cursor.description is None:
            return 0
        columns = [d[0] for d in cursor.description]
        rows = cursor.fetchall()
    write(columns, rows, args.format)
    return 0


def refuse_all_but_a_select(conn: duckdb.DuckDBPyConnection, query: str) -> None:
    """UserError unless `query` is one SELECT that calls nothing reaching past the lake."""
    statements = duckdb.extract_statements(query)
    if len(statements) != 1:
        raise UserError(f"visibility sql runs one query at a time ({len(statements)} statements given)")
    kind = statements[0].type.name
    serialized = json.loads(conn.execute("SELECT json_serialize_sql($query)", {"query": query}).fetchone()[0])
    if kind != "SELECT" or serialized.get("error"):
        named = "PRAGMA" if kind == "SELECT" else {"LOAD": "INSTALL or LOAD"}.get(kind, kind)
        raise UserError(f"visibility sql is read-only: {named} is refused; it runs one SELECT query")
    for name in _function_names(serialized):
        if name in SQL_FROM_STRINGS or name.startswith("sqlite_") or (
                name.startswith("ducklake_") and name not in DUCKLAKE_READERS):
            raise UserError(f"visibility sql reads the warehouse only: the function {name} is refused")


def _function_names(node) -> Iterator[str]:
    """Every function a serialized query calls, at any depth (subqueries, CTEs, table functions)."""
    if isinstance(node, dict):
        if isinstance(node.get("function_name"), str):
            yield node["function_name"].lower()
        for value in node.values():
            yield from _function_names(value)
    elif isinstance(node, list):
        for value in node:
            yield from _function_names(value)


def attach_sql() -> str:
    """What a DuckDB client of the pinned version runs to read the warehouse: extensions from the
    installed packages (nothing downloaded), then the lake attached read-only."""
    settings = lake_settings()
    lines = [f"-- DuckDB {duckdb.__version__}; the extensions come from the duckdb-ext-* packages",
             "SET autoinstall_known_extensions = false;",
             "SET autoload_known_extensions = false;",
             "SET extension_directory = " + quote(extension_directory()) + ";"]
    lines += [statement + ";" for statement in attach_statements(settings, read_only=True, secrets=False)]
    return "\n".join(lines)


def write(columns: list[str], rows: list[tuple], form: str) -> None:
    if form == "json":
        print(json.dumps([dict(zip(columns, row)) for row in rows], ensure_ascii=False, default=_json_value))
    elif form == "csv":
        out = csv.writer(sys.stdout)
        out.writerow(columns)
        out.writerows(rows)
    else:
        print(table(columns, rows))


def _json_value(value):
    if isinstance(value, (date, datetime)):
        return value.isoformat()
    if isinstance(value, Decimal):
        return float(value)
    return str(value)


def table(columns: list[str], rows: list[tuple], width: int = 60) -> str:
    """A plain text table; cells longer than `width` are cut with an ellipsis."""
    def cell(value) -> str:
        text = "NULL" if value is None else str(value).replace("\n", " ")
        return text if len(text) <= width else text[:width - 1] + "…"

    cells = [[cell(v) for v in row] for row in rows]
    widths = [max([len(c)] + [len(r[i]) for r in cells]) for i, c in enumerate(columns)]
    line = lambda values: " | ".join(v.ljust(w) for v, w in zip(values, widths)).rstrip()  # noqa: E731
    out = [line(columns), "-+-".join("-" * w for w in widths)] + [line(r) for r in cells]
    out.append(f"({len(rows)} row{'s' if len(rows) != 1 else ''})")
    return "\n".join(out)
