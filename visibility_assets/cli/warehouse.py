"""`visibility warehouse import FILE`: a warehouse.duckdb of an earlier version into the lake."""

from __future__ import annotations

from pathlib import Path

import duckdb

from visibility_assets.cli.arguments import UserError
from visibility_assets.cli.lake_reader import first_line
from visibility_assets.warehouse.lake import lake_settings
from visibility_assets.warehouse.migrate import import_file_warehouse


def add_parser(commands) -> None:
    warehouse = commands.add_parser("warehouse", help="warehouse upkeep")
    actions = warehouse.add_subparsers(dest="action", required=True, metavar="ACTION")
    imported = actions.add_parser("import", help="copy the tables of a warehouse.duckdb (earlier versions) into the lake")
    imported.add_argument("file", type=Path, help="e.g. .visibility/warehouse.duckdb")
    imported.set_defaults(handler=run_import)


def run_import(args) -> int:
    if not args.file.is_file():
        raise UserError(f"{args.file}: no such file")
    try:
        copied = import_file_warehouse(lake_settings(), args.file.resolve())
    except duckdb.Error as exc:
        raise UserError(f"{args.file}: {first_line(exc)}") from None
    for name, rows in copied.items():
        print(f"{name}: {rows} rows")
    print(f"{len(copied)} tables copied into the lake" if copied else "nothing to copy: the lake has every table")
    return 0
