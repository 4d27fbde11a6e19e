"""One collecting process per partition, across processes and machines.

The lock is one the operating system or the database drops when its holder dies, so a
collection killed on one machine can be resumed on another at once, with no lease to expire:
- a PostgreSQL catalog: a session advisory lock in that database (every machine shares it);
- the embedded SQLite catalog (one machine): an flock on a file beside the catalog.
"""

from __future__ import annotations

import fcntl
import hashlib
from contextlib import contextmanager
from pathlib import Path

from visibility_assets.warehouse.lake import LakeSettings


class PartitionBusy(Exception):
    """Another process is collecting the same partition right now."""


@contextmanager
def partition_lock(settings: LakeSettings, date: str, platform: str):
    name = f"{date}|{platform}"
    if settings.catalog_kind == "postgres":
        with _advisory_lock(settings.catalog.partition(":")[2], name):
            yield
    else:
        catalog = Path(settings.catalog.partition(":")[2])
        with _file_lock(catalog.parent / "locks" / date / f"{platform}.lock", name):
            yield


@contextmanager
def _advisory_lock(conninfo: str, name: str):
    import psycopg2  # with dagster-postgres; only a PostgreSQL catalog needs it

    key = int.from_bytes(hashlib.sha256(b"visibility-collect:" + name.encode()).digest()[:8], "big", signed=True)
    conn = psycopg2.connect(conninfo)
    try:
        conn.autocommit = True
        with conn.cursor() as cursor:
            cursor.execute("SELECT pg_try_advisory_lock(%s)", (key,))
            if not cursor.fetchone()[0]:
                raise PartitionBusy(f"partition {name} is being collected by another process")
        yield
    finally:
        conn.close()  # ends the session, which releases the lock


@contextmanager
def _file_lock(path: Path, name: str):
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "a") as handle:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise PartitionBusy(f"partition {name} is being collected by another process") from None
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)
