"""A copy of the small marts the pages read, in the process's memory, one per lake snapshot.

Every scan of a lake table costs ~8-10 ms of catalog queries before it reads a row (the list of
files and their statistics, from the catalog database), and a page makes up to ~15 of them: most
of an overview's time on a month of history. The marts change once a night; a copy of them taken
in one transaction at snapshot S holds exactly what the lake holds at S. So a request that reads
snapshot S, when the copy of S is ready, reads the copy: the cursor's temporary views of the
marts' names (the temp catalog comes first in DuckDB's name lookup) point at it. When it is not
ready (a night has just committed), the request reads the lake as before and the copy of the new
snapshot is made in the background: no request waits for it. Readers of the past (`as_of`) read
the lake.

Only marts of a bounded size are copied: per-brand, per-day figures and the alerts, not the
answers' text; a mart over MAX_ROWS rows stays in the lake."""

from __future__ import annotations

import threading
import uuid

import duckdb

# The marts the pages read, the copies made of them, in the order the pages need them.
CACHED_MARTS = ("mention_metrics", "visibility_alerts", "brand_claims", "sentiment_agreement",
                "untracked_brands", "faults_by_class", "fct_collection_quality", "brand_mentions")
MAX_ROWS = 2_000_000  # brand_mentions of 90 nightly days: 240k rows; all the copies of 90 days: under 90 MB
KEPT_COPIES = 2  # this snapshot's and the one before, which a request begun before the new copy still reads

VISIBLE_COPY = ("SELECT count(*) FROM duckdb_schemas() WHERE database_name = 'memory' AND schema_name = $schema")
COPIED_MARTS = ("SELECT table_name FROM duckdb_tables() WHERE database_name = 'memory' AND schema_name = $schema")
LAKE_MARTS = ("SELECT table_name FROM duckdb_tables() WHERE database_name = current_database()"
              " AND schema_name = 'main' AND list_contains($names, table_name)"
              " UNION ALL SELECT view_name FROM duckdb_views() WHERE database_name = current_database()"
              " AND schema_name = 'main' AND list_contains($names, view_name)")
COPIES = ("SELECT schema_name FROM duckdb_schemas() WHERE database_name = 'memory'"
          " AND starts_with(schema_name, $prefix)")


class MartCache:
    """The copies of one reader's lake, named marts_<this cache's id>_<snapshot id> in the DuckDB's
    in-memory database (which all its cursors share)."""

    def __init__(self, open_cursor):
        self._open_cursor = open_cursor  # () -> a cursor of the present, `USE lake` done
        self._prefix = "marts_" + uuid.uuid4().hex[:12] + "_"
        self._lock = threading.Lock()
        self._builder: threading.Thread | None = None
        self.failure: BaseException | None = None  # the last copy that could not be made, for the logs and tests

    def schema(self, snapshot: int) -> str:
        return self._prefix + str(int(snapshot))

    def point(self, conn: duckdb.DuckDBPyConnection, snapshot: int, pointed: int | None) -> int | None:
        """Within the cursor's transaction, reading `snapshot`: its views of the marts pointed at
        the copy of that snapshot when the transaction sees one, or dropped (the lake's marts
        read); `pointed` is the snapshot they point at now (None: no views; any other id:
        unknown). Returns the snapshot they point at after. A missing copy is made in the
        background."""
        schema = self.schema(snapshot)
        if conn.execute(VISIBLE_COPY, {"schema": schema}).fetchone()[0]:
            if pointed != snapshot:
                copied = {name for (name,) in conn.execute(COPIED_MARTS, {"schema": schema}).fetchall()}
                for name in CACHED_MARTS:
                    if name in copied:  # validated names: the tuple above and a schema of digits and hex
                        conn.execute("CREATE OR REPLACE TEMP VIEW " + name + " AS SELECT * FROM memory."
                                     + schema + "." + name)
                    else:
                        conn.execute("DROP VIEW IF EXISTS temp.main." + name)
            return snapshot
        if pointed is not None:
            self.drop_views(conn)
        self.copy_soon()
        return None

    @staticmethod
    def drop_views(conn: duckdb.DuckDBPyConnection) -> None:
        for name in CACHED_MARTS:
            conn.execute("DROP VIEW IF EXISTS temp.main." + name)

    def copy_soon(self) -> None:
        """A copy of the lake's latest snapshot, made in a thread of its own (one at a time)."""
        with self._lock:
            if self.copying():
                return
            self._builder = threading.Thread(target=self._copy_quietly, name="mart-cache", daemon=True)
            self._builder.start()

    def wait(self, timeout: float | None = None) -> None:
        """Until the copy under way, if any, is made."""
        builder = self._builder
        if builder is not None:
            builder.join(timeout)

    def copying(self) -> bool:
        builder = self._builder
        return builder is not None and builder.is_alive()

    def copy_now(self) -> int | None:
        """The copy of the lake's latest snapshot made (if it was not) in this thread; its snapshot."""
        self.wait()
        return self._copy()

    def _copy_quietly(self) -> None:
        try:
            self.failure = None
            self._copy()
        except Exception as exc:  # the pages read the lake meanwhile, as without a copy
            self.failure = exc

    def _copy(self) -> int | None:
        conn = self._open_cursor()
        try:
            conn.execute("BEGIN TRANSACTION")
            try:
                snapshot = conn.execute("FROM lake.current_snapshot()").fetchone()[0]
                schema = self.schema(snapshot)
                if not conn.execute(VISIBLE_COPY, {"schema": schema}).fetchone()[0]:
                    self._fill(conn, schema)
                conn.execute("COMMIT")
            except BaseException:
                conn.execute("ROLLBACK")
                raise
            self._drop_old(conn, snapshot)
            return snapshot
        finally:
            conn.close()

    @staticmethod
    def _fill(conn: duckdb.DuckDBPyConnection, schema: str) -> None:
        """Each mart the lake holds copied, in the transaction's one snapshot; one too large is left out."""
        present = {name for (name,) in conn.execute(LAKE_MARTS, {"names": list(CACHED_MARTS)}).fetchall()}
        conn.execute("CREATE SCHEMA memory." + schema)
        for name in CACHED_MARTS:
            if name not in present:
                continue
            target = "memory." + schema + "." + name
            conn.execute("CREATE TABLE " + target + " AS SELECT * FROM " + name)
            if conn.execute("SELECT count(*) FROM " + target).fetchone()[0] > MAX_ROWS:
                conn.execute("DROP TABLE " + target)

    def _drop_old(self, conn: duckdb.DuckDBPyConnection, snapshot: int) -> None:
        """The copies older than the last KEPT_COPIES snapshots dropped."""
        copies = sorted(int(name[len(self._prefix):]) for (name,) in
                        conn.execute(COPIES, {"prefix": self._prefix}).fetchall())
        for old in copies[:-KEPT_COPIES]:
            if old != snapshot:
                conn.execute("DROP SCHEMA IF EXISTS memory." + self.schema(old) + " CASCADE")
