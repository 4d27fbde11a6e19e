"""The workspace's reads: cursors of the warehouse's one read-only door, with the models'
statistics macros (wilson, two_proportion_z, ...) defined on each, so that a view computes its
intervals and tests with the same SQL the models and the alerts use.

A reader of the present is a cursor of the process's shared reader (each transaction sees the
latest snapshot). A reader of the past (`as_of`) needs a DuckDB attached at that snapshot; the
last few are kept, since a user who looks at the numbers before a change clicks through
several views of that same snapshot."""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Iterator
from contextlib import contextmanager

import duckdb

from visibility_assets.warehouse.lake import LakeSettings, open_reader

KEPT_SNAPSHOTS = 4


class SnapshotError(ValueError):
    """An `as_of` the warehouse cannot be read at."""


class WorkspaceReader:
    def __init__(self, settings: LakeSettings, macros: str):
        self.settings, self.macros = settings, macros
        self._past: OrderedDict[str, duckdb.DuckDBPyConnection] = OrderedDict()
        self._lock = threading.Lock()

    @contextmanager
    def cursor(self, as_of: str | None = None) -> Iterator[duckdb.DuckDBPyConnection]:
        conn = self._past_cursor(as_of) if as_of else open_reader(self.settings)
        try:
            if self.macros:
                conn.execute(self.macros)
            yield conn
        finally:
            conn.close()

    def _past_cursor(self, as_of: str) -> duckdb.DuckDBPyConnection:
        with self._lock:
            engine = self._past.get(as_of)
            if engine is None:
                try:
                    engine = open_reader(self.settings, as_of)
                except duckdb.Error as exc:
                    raise SnapshotError(f"cannot read the warehouse as of {as_of!r}: "
                                        + str(exc).strip().splitlines()[0]) from None
                self._past[as_of] = engine
                while len(self._past) > KEPT_SNAPSHOTS:
                    self._past.popitem(last=False)[1].close()
            self._past.move_to_end(as_of)
            cursor = engine.cursor()
        cursor.execute("USE lake")
        return cursor

    def snapshot(self, conn: duckdb.DuckDBPyConnection) -> int | None:
        """The lake snapshot this cursor reads."""
        return conn.execute("SELECT max(snapshot_id) FROM lake.snapshots()").fetchone()[0]
