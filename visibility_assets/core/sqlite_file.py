"""A small SQLite file the workspace writes beside the warehouse (accounts, reviews, share
links): each call opens its own short connection, in WAL mode so that every worker process of
`visibility serve` shares it, with its schema made on the first connection of the process."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Iterator
from contextlib import closing, contextmanager
from pathlib import Path


class SqliteFile:
    def __init__(self, path: Path, schema: str, upgrade: Callable[[sqlite3.Connection], None] | None = None):
        """`schema`: CREATE ... IF NOT EXISTS statements; `upgrade`: brings a file of an earlier
        version up to it (a column added), run once with the schema."""
        self.path, self.schema, self.upgrade = path, schema, upgrade
        self._ready = False

    @contextmanager
    def connect(self) -> Iterator[sqlite3.Connection]:
        if not self._ready:
            self.path.parent.mkdir(parents=True, exist_ok=True)
        with closing(sqlite3.connect(self.path, timeout=30, isolation_level=None)) as conn:
            conn.execute("PRAGMA foreign_keys = ON")
            if not self._ready:
                conn.execute("PRAGMA journal_mode = WAL")
                conn.executescript(self.schema)
                if self.upgrade is not None:
                    self.upgrade(conn)
                self._ready = True
            yield conn
