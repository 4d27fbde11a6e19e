"""The workspace's reads: cursors of the warehouse's one read-only door, with the models'
statistics macros (wilson, two_proportion_z, ...) defined on each, so that a view computes its
intervals and tests with the same SQL the models and the alerts use.

A reader of the present is a cursor of the process's shared reader (each transaction sees the
latest snapshot). A reader of the past (`as_of`) needs a DuckDB attached at that snapshot; the
last few are kept, since a user who looks at the numbers before a change clicks through
several views of that same snapshot.

Readers of the present read the small marts from a copy in memory of the snapshot they read,
once it is made (mart_cache.py): the lake's catalog queries are most of a page's time."""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Iterator
from contextlib import contextmanager

import duckdb

from visibility_assets.serve.mart_cache import MartCache
from visibility_assets.warehouse.lake import LakeSettings, discard_engine, one_snapshot, open_reader

KEPT_SNAPSHOTS = 4
UNKNOWN = -1  # no snapshot's id: the cursor's views of the marts are made again


class SnapshotError(ValueError):
    """An `as_of` the warehouse cannot be read at."""


class WorkspaceReader:
    """Each server thread keeps its cursors (and the macros defined on each: ~40 ms to define)
    from one request to the next: one of the present, each of whose requests reads the latest
    snapshot as the request begins, and a few of past snapshots."""

    def __init__(self, settings: LakeSettings, macros: str):
        self.settings, self.macros = settings, macros
        self._past: OrderedDict[int, duckdb.DuckDBPyConnection] = OrderedDict()  # snapshot id -> its engine
        self._lock = threading.Lock()
        self._local = threading.local()
        self._generation = 0  # how many fatal errors replaced the DuckDBs; each thread's cursors carry theirs
        self.marts = MartCache(self._new_cursor)

    def resolve(self, as_of: str) -> int:
        """The snapshot id an `as_of` names: an id the lake holds, or the last snapshot at or
        before a time. Any other value is a SnapshotError; nothing is attached for it."""
        with self.cursor() as conn:
            if as_of.isdigit():
                found = conn.execute("SELECT max(snapshot_id) FROM lake.snapshots() WHERE snapshot_id = $id",
                                     {"id": int(as_of)}).fetchone()[0]
            else:
                try:
                    found = conn.execute("SELECT max(snapshot_id) FROM lake.snapshots()"
                                         " WHERE snapshot_time <= CAST($at AS TIMESTAMPTZ)", {"at": as_of}).fetchone()[0]
                except duckdb.ConversionException:
                    raise SnapshotError(f"as_of {as_of!r}: neither a snapshot id nor a time"
                                        " (2026-11-30 08:00:00+08)") from None
        if found is None:
            raise SnapshotError(f"cannot read the warehouse as of {as_of!r}: no such snapshot"
                                if as_of.isdigit() else f"cannot read the warehouse as of {as_of!r}: it held nothing yet")
        return found

    @contextmanager
    def cursor(self, snapshot: int | None = None) -> Iterator[duckdb.DuckDBPyConnection]:
        cursors = self._local.__dict__.setdefault("cursors", {})
        if self._local.__dict__.get("generation") != self._generation:  # a fatal error since: its DuckDBs are gone
            for stale in cursors.values():
                stale.close()
            cursors.clear()
            self._local.generation = self._generation
        conn = cursors.get(snapshot)
        if conn is None:
            conn = self._new_cursor(snapshot)
            cursors[snapshot] = conn
            if snapshot is None:
                self._local.pointed = None  # a new cursor's views of the marts point at no copy
            while len(cursors) > KEPT_SNAPSHOTS + 1:  # the present and the last few pasts
                cursors.pop(next(k for k in cursors if k is not None)).close()
        generation = self._local.generation
        try:
            with one_snapshot(conn):  # a page names the snapshot it read: one for all its queries
                if snapshot is None:  # the snapshot's copy of the marts, or the lake's
                    self._local.pointed = self.marts.point(conn, self.snapshot(conn), self._local.pointed)
                yield conn
        except BaseException as exc:
            if snapshot is None:
                self._local.pointed = UNKNOWN  # the rolled-back transaction's views: point them again
            if not isinstance(exc, duckdb.Error):
                raise
            cursors.pop(snapshot, None)  # a failed statement may leave it unusable: the next request starts afresh
            conn.close()
            if isinstance(exc, duckdb.FatalException):
                self._discard_engines(generation)
            raise

    def _new_cursor(self, snapshot: int | None = None) -> duckdb.DuckDBPyConnection:
        """A cursor of the present (None) or of a past snapshot, with the statistics macros."""
        conn = self._past_cursor(snapshot) if snapshot is not None else open_reader(self.settings)
        if self.macros:
            conn.execute(self.macros)
        return conn

    def _past_cursor(self, snapshot: int) -> duckdb.DuckDBPyConnection:
        with self._lock:
            engine = self._past.get(snapshot)
            if engine is None:
                try:
                    engine = open_reader(self.settings, snapshot)
                except duckdb.Error as exc:
                    raise SnapshotError(f"cannot read the warehouse as of snapshot {snapshot}: "
                                        + str(exc).strip().splitlines()[0]) from None
                self._past[snapshot] = engine
                while len(self._past) > KEPT_SNAPSHOTS:
                    self._past.popitem(last=False)  # closed when the last thread's cursor of it goes
            self._past.move_to_end(snapshot)
            cursor = engine.cursor()
        cursor.execute("USE lake")
        return cursor

    def _discard_engines(self, generation: int) -> None:
        """A fatal error invalidates the DuckDB the cursor belongs to: every later statement on it
        fails. The DuckDBs of the present and the past are forgotten (not closed: another thread
        may be mid-statement on one of them, see lake.discard_engine), and each thread's cursors
        of them are replaced at its next request, so that one failed request is all a user sees.
        Only the first thread to fail in a generation does this: the others' cursors are already
        of the forgotten DuckDBs."""
        with self._lock:
            if generation != self._generation:
                return
            self._generation += 1
            self._past.clear()
            discard_engine(self.settings)

    def snapshot(self, conn: duckdb.DuckDBPyConnection) -> int | None:
        """The lake snapshot this cursor reads."""
        return conn.execute("FROM lake.current_snapshot()").fetchone()[0]
