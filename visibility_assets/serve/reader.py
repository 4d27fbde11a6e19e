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
    """Each server thread keeps its cursor (and the macros defined on it: ~40 ms to define) from
    one request to the next; a cursor of the present still reads the latest snapshot at each
    statement."""

    def __init__(self, settings: LakeSettings, macros: str):
        self.settings, self.macros = settings, macros
        self._past: OrderedDict[str, duckdb.DuckDBPyConnection] = OrderedDict()
        self._lock = threading.Lock()
        self._local = threading.local()

    @contextmanager
    def cursor(self, as_of: str | None = None) -> Iterator[duckdb.DuckDBPyConnection]:
        cursors = self._local.__dict__.setdefault("cursors", {})
        conn = cursors.get(as_of)
        if conn is None:
            conn = self._past_cursor(as_of) if as_of else open_reader(self.settings)
            if self.macros:
                conn.execute(self.macros)
            cursors[as_of] = conn
            while len(cursors) > KEPT_SNAPSHOTS + 1:  # the present and the last few pasts
                cursors.pop(next(k for k in cursors if k is not None))
        try:
            yield conn
        except duckdb.Error:
            cursors.pop(as_of, None)  # a failed statement may leave it unusable: the next request starts afresh
            conn.close()
            raise

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
                    self._past.popitem(last=False)  # closed when the last thread's cursor of it goes
            cursor = engine.cursor()
        cursor.execute("USE lake")
        return cursor

    def snapshot(self, conn: duckdb.DuckDBPyConnection) -> int | None:
        """The lake snapshot this cursor reads."""
        return conn.execute("FROM lake.current_snapshot()").fetchone()[0]
