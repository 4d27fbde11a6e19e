"""Reading the warehouse from a command: a read-only connection, or a user error that says why not."""

from __future__ import annotations

from contextlib import contextmanager

import duckdb

from visibility_assets.cli.arguments import UserError
from visibility_assets.core.faults import DiskFull, is_disk_full
from visibility_assets.warehouse.lake import WarehouseSettingError, lake_settings, open_reader, open_sealed_reader
from visibility_assets.warehouse.resource import WarehouseResource


@contextmanager
def read_warehouse(as_of: str | None = None, sealed: bool = False):
    """The warehouse, read-only, at `as_of` (a snapshot id or a timestamp) when given; `sealed`
    for a query the user typed: no file outside the lake, settings locked (open_sealed_reader)."""
    try:
        settings = lake_settings()
    except WarehouseSettingError as exc:
        raise UserError(str(exc)) from None
    if not WarehouseResource.from_settings(settings).exists():
        raise UserError(f"no warehouse at {settings.catalog}: run `visibility demo` or materialize partitions first")
    try:
        conn = open_sealed_reader(settings, as_of) if sealed else open_reader(settings, as_of)
    except WarehouseSettingError as exc:
        raise UserError(str(exc)) from None
    except duckdb.Error as exc:
        if is_disk_full(exc):  # SQLite writes its WAL index even to read the catalog
            raise UserError(f"cannot open the warehouse to read it: {DiskFull('the catalog', settings.catalog)}"
                            ) from None
        raise UserError(f"cannot open the warehouse{' as of ' + as_of if as_of else ''}: {first_line(exc)}") from None
    try:
        yield conn
    finally:
        conn.close()


def first_line(exc: BaseException) -> str:
    return str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
