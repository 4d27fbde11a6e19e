"""The warehouse is a DuckLake: a catalog in a database and the data as Parquet files.

Embedded default: a SQLite catalog and a data folder under the data directory, so several
processes on one machine read and write at once. Production: a PostgreSQL catalog and a data
path on shared storage or S3-compatible object storage (docs/deployment.md). One setting
chooses: VISIBILITY_WAREHOUSE (`sqlite:FILE` or `postgres:CONNINFO`), with
VISIBILITY_WAREHOUSE_DATA for the data path. Credentials are never part of either: libpq reads
PGPASSWORD, S3 keys come from AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY.

Every connection is a fresh in-memory DuckDB with the lake attached as `lake` and selected,
so statements name tables unqualified. Extensions load from the duckdb-ext-* packages pinned
with duckdb; nothing is ever downloaded.
"""

from __future__ import annotations

import fcntl
import os
import sqlite3
import threading
import time
import weakref
from collections.abc import Callable
from contextlib import closing, contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TypeVar

import duckdb

from visibility_assets.core.faults import DiskFull, writing
from visibility_assets.core.paths import data_dir
from visibility_assets.core.retry import backoff_s
from visibility_assets.warehouse import schema_cache

CATALOG_ENV = "VISIBILITY_WAREHOUSE"
DATA_ENV = "VISIBILITY_WAREHOUSE_DATA"
# Set (to true) after moving the data of a catalog kept elsewhere: the catalog remembers the
# data path it was created with, and refuses another one unless told that the data moved.
DATA_MOVED_ENV = "VISIBILITY_WAREHOUSE_DATA_MOVED"
S3_ENDPOINT_ENV = "VISIBILITY_S3_ENDPOINT"
S3_REGION_ENV = "VISIBILITY_S3_REGION"
S3_KEY_ENV, S3_SECRET_ENV = "AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY"
# DuckLake can keep small inserts in its catalog instead of a Parquet file each ("data
# inlining"). It stays off: with DuckDB 1.4.4 a filter over inlined rows returned wrong results
# (a 30-day demo: `WHERE date = ... AND platform = 'kimi'` found 0 of the partition's 135
# journal answers, 135 once the same rows were flushed to Parquet), and publishing a partition
# stored nothing. Checkpoints are small files instead; the weekly maintenance merges them.
INLINING_ROW_LIMIT = 0
LAKE = "lake"
THREADS_ENV = "VISIBILITY_DUCKDB_THREADS"  # DuckDB threads per engine of this process (threads_setting)
S3_SECRET_NAME = "visibility_s3"
WRITE_ATTEMPTS = 12  # commit conflicts and a busy SQLite catalog clear within a second or two
CATALOG_CREATION_ATTEMPTS = 8  # the creator's transaction commits within a second or two

T = TypeVar("T")


class WarehouseSettingError(ValueError):
    """VISIBILITY_WAREHOUSE or its companions name something the warehouse cannot use."""


@dataclass(frozen=True)
class LakeSettings:
    catalog: str  # sqlite:FILE | postgres:CONNINFO (libpq key=value, without a password)
    data_path: str  # a folder, or s3://bucket/prefix/
    s3_endpoint: str | None = None  # host:port of an S3-compatible store; None: AWS itself
    s3_region: str | None = None
    s3_key_id: str | None = field(default=None, repr=False)  # never printed or logged
    s3_secret: str | None = field(default=None, repr=False)
    s3_use_ssl: bool = True
    data_moved: bool = False  # VISIBILITY_WAREHOUSE_DATA_MOVED: take data_path over the catalog's

    @classmethod
    def from_env(cls, home: Path) -> LakeSettings:
        catalog = os.environ.get(CATALOG_ENV) or "sqlite:" + str(home / "warehouse" / "catalog.sqlite")
        data_path = os.environ.get(DATA_ENV) or str(home / "warehouse" / "data") + "/"
        endpoint = os.environ.get(S3_ENDPOINT_ENV) or None
        use_ssl = True
        if endpoint and "://" in endpoint:
            use_ssl = endpoint.startswith("https://")
            endpoint = endpoint.split("://", 1)[1]
        moved = (os.environ.get(DATA_MOVED_ENV) or "").strip().lower() in ("1", "true", "yes")
        settings = cls(catalog, data_path, endpoint, os.environ.get(S3_REGION_ENV) or None,
                       os.environ.get(S3_KEY_ENV) or None, os.environ.get(S3_SECRET_ENV) or None, use_ssl, moved)
        settings.validate()
        return settings

    def validate(self) -> None:
        kind, _, target = self.catalog.partition(":")
        if kind not in ("sqlite", "postgres") or not target:
            raise WarehouseSettingError(
                f"{CATALOG_ENV}={self.catalog!r}: expected 'sqlite:FILE' or 'postgres:dbname=... host=...'")
        if kind == "postgres" and "password" in target.lower():
            raise WarehouseSettingError(f"{CATALOG_ENV}: put the password in PGPASSWORD, not in the setting")
        if not self.data_path.endswith("/"):
            raise WarehouseSettingError(f"{DATA_ENV}={self.data_path!r}: a data path ends with '/'")

    @property
    def catalog_kind(self) -> str:
        return self.catalog.partition(":")[0]

    @property
    def data_beside_catalog(self) -> bool:
        """An embedded catalog with its data in the `data/` folder beside it (the data directory's
        layout): the two move together, so the data path is wherever the catalog now is."""
        if self.catalog_kind != "sqlite" or self.on_object_storage:
            return False
        catalog = Path(self.catalog.partition(":")[2])
        return Path(self.data_path).resolve() == (catalog.parent / "data").resolve()

    @property
    def on_object_storage(self) -> bool:
        return self.data_path.startswith(("s3://", "s3a://", "gcs://", "r2://"))

    def prepare_local(self) -> None:
        """Create the folders of an embedded catalog and a local data path.

        A new SQLite catalog is put in WAL mode (a setting the file keeps): readers then never
        block a writer's commit, and a writer never blocks them."""
        if self.catalog_kind == "sqlite":
            path = Path(self.catalog.partition(":")[2])
            path.parent.mkdir(parents=True, exist_ok=True)
            if not path.exists():
                with closing(sqlite3.connect(path)) as catalog:
                    catalog.execute("PRAGMA journal_mode=WAL")
        if not self.on_object_storage:
            Path(self.data_path).mkdir(parents=True, exist_ok=True)


def lake_settings() -> LakeSettings:
    """Where the warehouse is: VISIBILITY_WAREHOUSE, or a lake under the data directory."""
    return LakeSettings.from_env(data_dir())


def extension_directory() -> str:
    """The `extensions` folder of the duckdb-ext-* packages (installed with the product)."""
    import duckdb_ext  # a namespace package: the extension wheels share it

    for folder in duckdb_ext.__path__:
        if (Path(folder) / "extensions").is_dir():
            return str(Path(folder) / "extensions")
    raise RuntimeError("the duckdb-ext-* packages are not installed: pip install the product again")


def quote(value: str) -> str:
    """A SQL string literal, for the statements that take no parameters (ATTACH, CREATE SECRET)."""
    return "'" + value.replace("'", "''") + "'"


def attach_statements(settings: LakeSettings, read_only: bool = False, as_of: str | int | None = None,
                      secrets: bool = True) -> list[str]:
    """The statements that attach the lake as `lake` and select it, after the extensions load.

    `as_of` (read-only): a snapshot id, or a timestamp; `secrets=False` writes placeholders for
    the S3 keys (what `visibility sql --print-attach` prints)."""
    statements = ["LOAD ducklake", "LOAD " + settings.catalog_kind]
    if settings.on_object_storage:
        statements.append("LOAD httpfs")
        key = settings.s3_key_id if secrets else "<" + S3_KEY_ENV + ">"
        secret = settings.s3_secret if secrets else "<" + S3_SECRET_ENV + ">"
        options = ["TYPE s3"]
        if key and secret:
            options += ["KEY_ID " + quote(key), "SECRET " + quote(secret)]
        if settings.s3_endpoint:
            options += ["ENDPOINT " + quote(settings.s3_endpoint), "URL_STYLE 'path'"]
        if settings.s3_region:
            options.append("REGION " + quote(settings.s3_region))
        options.append("USE_SSL " + ("true" if settings.s3_use_ssl else "false"))
        statements.append("CREATE OR REPLACE SECRET " + S3_SECRET_NAME + " (" + ", ".join(options) + ")")
    options = ["DATA_PATH " + quote(settings.data_path)]
    # The catalog stores the data path it was created with, as an absolute path, and refuses any
    # other; the files' own paths are relative to it. A copied or restored data directory (cp -a,
    # a new mount point) therefore reads its data where it now is.
    if settings.data_beside_catalog or settings.data_moved:
        options.append("OVERRIDE_DATA_PATH true")
    if read_only:
        options.append("READ_ONLY")
        if as_of is not None:
            options.append(_snapshot_option(as_of))
    else:
        options.append("DATA_INLINING_ROW_LIMIT " + str(INLINING_ROW_LIMIT))
    statements.append("ATTACH " + quote("ducklake:" + settings.catalog) + " AS " + LAKE
                      + " (" + ", ".join(options) + ")")
    statements.append("USE " + LAKE)
    return statements


def _snapshot_option(as_of: str | int) -> str:
    text = str(as_of).strip()
    if text.isdigit():
        return "SNAPSHOT_VERSION " + text
    return "SNAPSHOT_TIME " + quote(text)


def open_reader(settings: LakeSettings, as_of: str | int | None = None) -> duckdb.DuckDBPyConnection:
    """The one read-only door to the lake: a connection with the lake attached read-only and
    selected; close it when done, or use `reading`. It never blocks a writer, and a writer
    never blocks it.

    Readers of the present share one DuckDB per process and settings, as writers do (loading
    the extensions costs ~0.25 s, more than most reads): each is a cursor of it, and each of
    its transactions sees the lake's latest snapshot. A reader of the past (`as_of`, a snapshot
    id or a time) gets a DuckDB of its own attached at that snapshot."""
    if as_of is not None:
        return _open(settings, read_only=True, as_of=as_of)
    return _cursor(settings, read_only=True)


def open_sealed_reader(settings: LakeSettings, as_of: str | int | None = None) -> duckdb.DuckDBPyConnection:
    """A reader of its own for a query someone typed (`visibility sql`): the lake attached
    read-only, no file outside its data path reachable (DuckDB's enable_external_access, with
    the data path allowed), and its settings locked so that the query cannot undo that. Close
    it when done: it is never shared."""
    conn = _open(settings, read_only=True, as_of=as_of)
    try:
        conn.execute("SET allowed_directories = $folders", {"folders": [settings.data_path]})
        conn.execute("SET enable_external_access = false")
        conn.execute("SET lock_configuration = true")
    except BaseException:
        conn.close()
        raise
    return conn


def connect(settings: LakeSettings) -> duckdb.DuckDBPyConnection:
    """A writer's connection with the lake attached and selected; close it when done.

    Writers share one DuckDB per process and settings (each connection a cursor of it, with
    its own transactions)."""
    return _cursor(settings, read_only=False)


def _cursor(settings: LakeSettings, read_only: bool) -> duckdb.DuckDBPyConnection:
    """A cursor of the process's shared DuckDB for these settings, with the lake selected.

    The cursor is made and counted under the lock that retires engines, so an engine is never
    retired between being looked up and being used."""
    with _ENGINES_LOCK:
        engine = _ENGINES.get((settings, read_only))
        if engine is None:
            if not read_only:
                settings.prepare_local()
            engine = _ENGINES[(settings, read_only)] = _open(settings, read_only, engine=_spare())
            _CURSORS[id(engine)] = weakref.WeakSet()
            while len(_ENGINES) > MAX_ENGINES:
                _retire(_ENGINES.pop(next(iter(_ENGINES))))
        cursor = engine.cursor()
        _CURSORS[id(engine)].add(cursor)
    cursor.execute("USE " + LAKE)
    return cursor


def _spare() -> duckdb.DuckDBPyConnection | None:
    return _SPARE.pop() if _SPARE else None


def _retire(engine: duckdb.DuckDBPyConnection) -> None:
    """An engine no longer needed: its lake detached, it is kept with its extensions loaded for
    the next lake this process opens (a new DuckDB loads them again in ~0.35 s, most of it
    checking each extension's signature over its 50 MB; a process that opens several lakes, a
    test suite, pays that each time).

    An engine with a cursor still open somewhere (a workspace's thread, a copy of the marts in
    its own thread) is only forgotten: detaching its lake would pull the tables from under that
    cursor's statement (DuckDB dies in the ducklake extension), or hand that cursor the next
    lake's tables. It goes when its last cursor does."""
    if _CURSORS.pop(id(engine)):
        return
    try:
        engine.execute("USE memory")
        engine.execute("DETACH " + LAKE)
        for (schema,) in engine.execute(MEMORY_SCHEMAS).fetchall():  # what readers kept of that lake (serve/mart_cache.py)
            engine.execute("DROP SCHEMA memory.\"" + schema.replace('"', '""') + "\" CASCADE")
        engine.execute("DROP SECRET IF EXISTS " + S3_SECRET_NAME)
    except duckdb.Error:
        return  # not kept; not closed either, for the reason discard_engine gives
    if len(_SPARE) < MAX_ENGINES:
        _SPARE.append(engine)


MEMORY_SCHEMAS = ("SELECT schema_name FROM duckdb_schemas()"
                  " WHERE database_name = 'memory' AND schema_name <> 'main' AND NOT internal")


def discard_engine(settings: LakeSettings) -> None:
    """Forget the shared DuckDBs of these settings: after a failed statement, the next connection
    starts afresh.

    They are not closed: closing a DuckDB closes every cursor of it, under the feet of another
    thread's statement on one (a reader's copy of the marts, another platform's read), and
    DuckDB's Python client then frees what that statement is using: the process dies (seen as
    heap corruption in CreateTable). Each goes when its last cursor is closed."""
    with _ENGINES_LOCK:
        for read_only in (False, True):
            engine = _ENGINES.pop((settings, read_only), None)
            if engine is not None:
                _CURSORS.pop(id(engine), None)


def _open(settings: LakeSettings, read_only: bool = False, as_of: str | int | None = None,
          engine: duckdb.DuckDBPyConnection | None = None) -> duckdb.DuckDBPyConnection:
    """A DuckDB (or `engine`, a retired one) with the lake of these settings attached."""
    # The extensions are loaded by name from the pinned duckdb-ext-* packages' own folder, never
    # downloaded. DuckDB's signature check re-hashes each file on every LOAD (0.15-0.2 s per
    # extension, per DuckDB a process opens); what it guards against, a file from elsewhere, can
    # reach that folder only with write access to the environment itself. After this, no SQL can
    # load another: the writers' and readers' statements are ours, and the sealed reader turns off
    # external access (which refuses LOAD) and locks its settings before it runs a typed query.
    conn = engine or duckdb.connect(config={"extension_directory": extension_directory(),
                                            "autoinstall_known_extensions": False,
                                            "autoload_known_extensions": False,
                                            "allow_unsigned_extensions": True})
    try:
        threads = threads_setting()
        if threads:  # a retired engine too: it keeps the settings it was made with
            conn.execute("SET threads = " + str(threads["threads"]))  # a validated whole number
        _attach(conn, attach_statements(settings, read_only, as_of))
        schema_cache.mark_engine(conn)
    except duckdb.Error as exc:
        conn.close()
        if "does not match existing data path" in str(exc):
            remembered = str(exc).split("in the catalog", 1)[-1].strip(' ".\n').split('"')[0]
            raise WarehouseSettingError(
                f"{DATA_ENV}={settings.data_path!r}: the catalog {settings.catalog} keeps its data at"
                f" {remembered!r}; if the data was moved to the new path, set {DATA_MOVED_ENV}=true") from None
        raise
    except BaseException:
        conn.close()
        raise
    return conn


def threads_setting() -> dict:
    """DuckDB's `threads` for this process's engines when THREADS_ENV sets it (runs.py gives
    each of a night's parallel runs its share of the cores); DuckDB's default, one per core,
    otherwise. Six runs' DuckDBs of two threads each on two cores spent ~15% more CPU on a
    night's small statements than one thread each."""
    value = os.environ.get(THREADS_ENV, "").strip()
    if not value:
        return {}
    if not value.isdigit() or int(value) < 1:
        raise WarehouseSettingError(f"{THREADS_ENV}={value!r}: a whole number of threads, 1 or more")
    return {"threads": int(value)}


def _attach(conn: duckdb.DuckDBPyConnection, statements: list[str]) -> None:
    """The attach statements; when another process is creating the same new catalog at this
    moment (the first night of several machines on one PostgreSQL catalog), our creation of its
    tables loses the race: attach again, to the catalog the winner made."""
    for attempt in range(1, CATALOG_CREATION_ATTEMPTS + 1):
        try:
            for statement in statements:
                conn.execute(statement)
            return
        except duckdb.Error as exc:
            if attempt == CATALOG_CREATION_ATTEMPTS or not lost_catalog_creation_race(exc):
                raise
            time.sleep(backoff_s(attempt, 0.05, 1.0))


def lost_catalog_creation_race(exc: duckdb.Error) -> bool:
    message = str(exc)
    return "Failed to initialize DuckLake" in message and (
        "already exists" in message or "duplicate key value" in message)


_ENGINES: dict[tuple[LakeSettings, bool], duckdb.DuckDBPyConnection] = {}  # (settings, read-only)
_CURSORS: dict[int, weakref.WeakSet] = {}  # id of each engine in _ENGINES: its cursors not yet collected
_SPARE: list[duckdb.DuckDBPyConnection] = []  # retired engines, no lake attached
_ENGINES_LOCK = threading.Lock()
MAX_ENGINES = 4  # tests switch data directories; a process in production uses two (a writer's, a reader's)


def is_retryable(exc: BaseException) -> bool:
    """A commit conflict with another writer, or the SQLite catalog busy at commit."""
    if isinstance(exc, duckdb.TransactionException):
        return True
    message = str(exc).lower()
    return isinstance(exc, duckdb.Error) and any(
        sign in message for sign in ("conflict", "database is locked", "could not serialize", "busy"))


def write_with_retry(settings: LakeSettings, work: Callable[[duckdb.DuckDBPyConnection], T],
                     attempts: int = WRITE_ATTEMPTS, base_delay_s: float = 0.05,
                     max_delay_s: float = 2.0, snapshot: bool = True) -> tuple[T, int | None]:
    """Run `work` in one transaction on a fresh connection; on a commit conflict, start over.
    Returns its result and the snapshot the commit made (None unless `snapshot`: asking costs a
    catalog query, which a journal checkpoint has no use for).

    A statement that fails for another reason can leave the lake's catalog connection in a state
    that blocks the next one, so it discards the process's DuckDB before it is raised.
    """
    for attempt in range(1, attempts + 1):
        conn = None
        try:
            _open_writer_before_turn(settings)
            # Everything else that reads the catalog inside the turn: next to another writer's
            # commit, a read of a SQLite catalog waits out its busy timeout (a second), and holds
            # the GIL while it waits, which stalled every sender of the process (measured).
            with writing("the warehouse", settings.data_path), _writer_turn(settings):
                conn = connect(settings)
                conn.execute("BEGIN TRANSACTION")
                result = work(conn)
                conn.execute("COMMIT")
                return result, last_committed_snapshot(conn) if snapshot else None
        except (duckdb.Error, DiskFull) as exc:
            schema_cache.forget_everything()
            if conn is not None:
                conn.close()
            if not is_retryable(exc):
                discard_engine(settings)
            if attempt == attempts or not is_retryable(exc):
                raise
            time.sleep(backoff_s(attempt, base_delay_s, max_delay_s))
        finally:
            if conn is not None:
                conn.close()
    raise AssertionError("unreachable")


def _open_writer_before_turn(settings: LakeSettings) -> None:
    """The process's writer DuckDB made before its first turn, when the SQLite catalog exists:
    loading the extensions and attaching the lake take ~0.3 s, which the six platforms' runs of
    a night, starting together, spent one after another inside the turn before their first
    request. A process's first write comes before it sends anything (a journal's opening), so
    no sender of it can wait behind this read of the catalog. A new catalog is still made
    inside the turn: two processes must not both create its tables."""
    if settings.catalog_kind != "sqlite" or (settings, False) in _ENGINES:
        return
    if Path(settings.catalog.partition(":")[2]).exists():
        connect(settings).close()


def compact_catalog(settings: LakeSettings) -> bool:
    """An embedded catalog rewritten whole (SQLite's VACUUM), in the writers' turn; False for a
    PostgreSQL catalog, which its autovacuum keeps, and for a catalog another process holds
    locked (left for the next night: a compaction is not worth failing the night's run).

    Every night's merges and expired snapshots delete catalog rows, and SQLite hands new rows the
    next row id: after 120 nights the column statistics held 3,800 rows under row ids up to
    316,000. DuckDB reads a SQLite catalog whole on every scan of a lake table (its SQLite reader
    pushes no filter down) and plans by those row ids; the file list of a scan cost 5.9 ms instead
    of 4.2 ms on a new lake, and 5.1 ms after a VACUUM, which renumbers the rows of the tables
    without a key (the column statistics) and drops the free pages. Readers go on from their
    snapshot meanwhile (WAL mode); it takes ~20 ms a night."""
    if settings.catalog_kind != "sqlite":
        return False
    path = settings.catalog.partition(":")[2]
    with writing("the warehouse", path), _writer_turn(settings), closing(sqlite3.connect(path, timeout=5)) as catalog:
        try:
            catalog.execute("VACUUM")
        except sqlite3.OperationalError as exc:
            if "locked" in str(exc) or "busy" in str(exc):
                return False
            raise
    return True


@contextmanager
def _writer_turn(settings: LakeSettings):
    """With a SQLite catalog, one write transaction at a time on the machine.

    DuckLake holds a SQLite read snapshot for the whole transaction and writes at commit; in
    WAL mode a commit from an older snapshot than the latest is refused (SQLITE_BUSY_SNAPSHOT),
    so a long transaction next to frequent checkpoints would be refused on every try. Taking
    turns (an flock beside the catalog, which a dead holder drops) makes every commit succeed.
    A PostgreSQL catalog needs no turns: DuckLake resolves concurrent commits there itself.
    """
    if settings.catalog_kind != "sqlite":
        yield
        return
    path = Path(settings.catalog.partition(":")[2] + ".write-lock")
    path.parent.mkdir(parents=True, exist_ok=True)  # the turn comes before the first connection
    with open(path, "a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


@contextmanager
def one_snapshot(conn: duckdb.DuckDBPyConnection):
    """The block's reads in one transaction: each sees the snapshot the first one saw, and the
    lake's catalog is loaded once for all of them instead of once per statement (~3 ms each on
    a SQLite catalog)."""
    conn.execute("BEGIN TRANSACTION")
    try:
        yield conn
    except BaseException:
        try:
            conn.execute("ROLLBACK")
        except duckdb.Error:
            pass  # a connection a fatal error invalidated: the error that did it is the one to raise
        raise
    conn.execute("COMMIT")


@contextmanager
def reading(settings: LakeSettings, as_of: str | int | None = None):
    """open_reader as a context manager: the connection closes when the block ends."""
    conn = open_reader(settings, as_of)
    try:
        yield conn
    finally:
        conn.close()


def last_committed_snapshot(conn: duckdb.DuckDBPyConnection) -> int | None:
    """The snapshot this connection's last commit made (None when it wrote nothing)."""
    return conn.execute("FROM " + LAKE + ".last_committed_snapshot()").fetchone()[0]
