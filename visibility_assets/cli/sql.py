"""`visibility sql`: a read-only query against the warehouse, or the SQL that attaches it."""

from __future__ import annotations

import csv
import json
import sys
from datetime import date, datetime
from decimal import Decimal

import duckdb

from visibility_assets.cli.arguments import UserError
from visibility_assets.cli.lake_reader import first_line, read_warehouse
from visibility_assets.warehouse.lake import attach_statements, extension_directory, lake_settings, quote

FORMATS = ("table", "csv", "json")


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
    with read_warehouse(args.as_of) as conn:
        try:
            cursor = conn.execute(args.query)
        except duckdb.Error as exc:
            raise UserError(first_line(exc)) from None
        if cursor.description is None:
            return 0
        columns = [d[0] for d in cursor.description]
        rows = cursor.fetchall()
    write(columns, rows, args.format)
    return 0


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
