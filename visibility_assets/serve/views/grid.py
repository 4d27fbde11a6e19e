"""A table a view shows: its columns and rows, as JSON, CSV and the page read it."""

from __future__ import annotations

import csv
import io
from dataclasses import dataclass
from datetime import date, datetime
from decimal import Decimal

import duckdb
import xlsxwriter


@dataclass(frozen=True)
class Grid:
    columns: tuple[str, ...]
    rows: tuple[dict, ...]

    @classmethod
    def of(cls, cursor: duckdb.DuckDBPyConnection) -> Grid:
        """The result of the cursor's last statement."""
        columns = tuple(d[0] for d in cursor.description)
        return cls(columns, tuple(dict(zip(columns, row)) for row in cursor.fetchall()))

    def without(self, column: str) -> Grid:
        """The grid less one column (a page's total, counted on each of its rows)."""
        return Grid(tuple(c for c in self.columns if c != column),
                    tuple({k: v for k, v in row.items() if k != column} for row in self.rows))

    def as_json(self) -> list[dict]:
        return [{k: json_value(v) for k, v in row.items()} for row in self.rows]

    def as_csv(self) -> str:
        out = io.StringIO()
        writer = csv.writer(out)
        writer.writerow(self.columns)
        for row in self.rows:
            writer.writerow([_csv_cell(row[c]) for c in self.columns])
        return out.getvalue()


def as_xlsx(tables: dict[str, Grid]) -> bytes:
    """The tables as one workbook, a sheet each. A text is written as text, never as a formula
    or a link (an answer's text or a brand's name may start with "=")."""
    out = io.BytesIO()
    with xlsxwriter.Workbook(out, {"in_memory": True, "strings_to_formulas": False, "strings_to_urls": False,
                                   "strings_to_numbers": False, "nan_inf_to_errors": True}) as book:
        for name, grid in tables.items():
            sheet = book.add_worksheet(name[:31])  # Excel's limit on a sheet's name
            sheet.write_row(0, 0, grid.columns)
            for index, row in enumerate(grid.rows, start=1):
                sheet.write_row(index, 0, [_xlsx_cell(row[c]) for c in grid.columns])
    return out.getvalue()


def _xlsx_cell(value):
    value = json_value(value)
    if isinstance(value, (list, dict)):
        return "; ".join(str(v) for v in value) if isinstance(value, list) else str(value)
    return value


def json_value(value):
    if isinstance(value, (date, datetime)):
        return value.isoformat()
    if isinstance(value, Decimal):
        return float(value)
    if isinstance(value, float) and value != value:
        return None  # NaN is not JSON
    if isinstance(value, (list, tuple)):
        return [json_value(v) for v in value]
    if isinstance(value, dict):
        return {k: json_value(v) for k, v in value.items()}
    return value


def _csv_cell(value):
    value = json_value(value)
    if isinstance(value, list):
        value = "; ".join(str(v) for v in value)
    if isinstance(value, str) and value[:1] in ("=", "+", "-", "@", "\t", "\r"):
        return "'" + value  # a spreadsheet must not run a cell as a formula
    return value
