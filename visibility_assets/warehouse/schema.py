"""The one way a table's columns are written down: an Arrow schema, from which its DuckDB
DDL, its column list and its Arrow batches are derived (warehouse/tables.py declares them all)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date, datetime

import pyarrow as pa

TIMESTAMP = pa.timestamp("us", tz="UTC")

# Arrow type -> DuckDB column type, for the scalar types these tables use.
DUCKDB_TYPES = {
    pa.string(): "VARCHAR", pa.int32(): "INTEGER", pa.int64(): "BIGINT", pa.float64(): "DOUBLE",
    pa.bool_(): "BOOLEAN", pa.date32(): "DATE", TIMESTAMP: "TIMESTAMPTZ",
}


def duckdb_type(type_: pa.DataType) -> str:
    if pa.types.is_list(type_):
        return duckdb_type(type_.value_type) + "[]"
    if pa.types.is_struct(type_):
        return "STRUCT(" + ", ".join(f.name + " " + duckdb_type(f.type) for f in type_) + ")"
    return DUCKDB_TYPES[type_]


def required(name: str, type_: pa.DataType) -> pa.Field:
    return pa.field(name, type_, nullable=False)


def optional(name: str, type_: pa.DataType) -> pa.Field:
    return pa.field(name, type_)


def column_ddl(field: pa.Field) -> str:
    # Quoted: some column names are SQL keywords (sample_state_history.at).
    return '"' + field.name + '" ' + duckdb_type(field.type) + ("" if field.nullable else " NOT NULL")


@dataclass(frozen=True)
class Table:
    name: str
    fields: tuple[pa.Field, ...]
    primary_key: tuple[str, ...] = ()

    @property
    def schema(self) -> pa.Schema:
        return pa.schema(self.fields)

    @property
    def columns(self) -> list[str]:
        return [f.name for f in self.fields]

    def ddl(self, temporary: bool = False) -> str:
        """CREATE TABLE IF NOT EXISTS, from the schema (names and types are this module's own);
        `temporary`: an empty stand-in for a reader the lake has no such table for yet.

        DuckLake has no key constraints: `primary_key` documents the grain, which the journal
        (collect/journal.py) and the publishing query keep."""
        lines = [column_ddl(f) for f in self.fields]
        create = "CREATE TEMP TABLE IF NOT EXISTS " if temporary else "CREATE TABLE IF NOT EXISTS "
        return create + self.name + " (\n    " + ",\n    ".join(lines) + "\n)"

    def batch(self, rows: list[tuple]) -> pa.Table:
        """Rows given as tuples in column order, as an Arrow table of this schema."""
        columns = list(zip(*rows)) or [()] * len(self.fields)
        return pa.Table.from_arrays([pa.array(values, type=f.type) for values, f in zip(columns, self.fields)],
                                    schema=self.schema)

    def from_dicts(self, rows: list[dict]) -> pa.Table:
        """Rows given as dicts keyed by column name (a missing optional column is null)."""
        return pa.Table.from_pylist(rows, schema=self.schema)

    def to_json(self, row: tuple) -> list:
        """A row in column order as JSON values (times and days as ISO text), for a local log."""
        return [value.isoformat() if isinstance(value, date | datetime) else value for value in row]

    def from_json(self, values: list) -> tuple:
        """The row to_json wrote, with its times and days back."""
        return tuple(_from_json(value, f.type) for value, f in zip(values, self.fields))

    def project(self, name: str, columns: list[str], primary_key: tuple[str, ...] = ()) -> Table:
        """A table of some of these columns, in the order given."""
        by_name = {f.name: f for f in self.fields}
        return Table(name, tuple(by_name[c] for c in columns), primary_key)


def _from_json(value, type_: pa.DataType):
    if value is None:
        return None
    if pa.types.is_timestamp(type_):
        return datetime.fromisoformat(value)
    if pa.types.is_date(type_):
        return date.fromisoformat(value)
    return value
