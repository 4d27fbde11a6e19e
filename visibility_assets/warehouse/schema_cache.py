"""What this process has seen its lake hold: tables with the columns their schema declares,
views at their definition, models' tables with their SQL's columns.

Every question to a DuckLake catalog costs 3-15 ms (it reads the catalog's list of files and
their statistics), and a night's partition asked ~60 of them only to find the same tables
there again. Tables are never dropped and columns only added, so a positive answer stays true
for as long as the DuckDB that saw it lives; each DuckDB of the lake carries a token of its own
(in its in-memory database, which its cursors share), and the answers are kept per token. What
a failed transaction created may never have been committed, so a failure forgets every answer.
"""

from __future__ import annotations

import threading
import time
import uuid

import duckdb

TOKEN_TABLE = "memory.main.visibility_engine"
_KNOWN: dict[str, set[str]] = {}
_ABSENT: dict[tuple[str, str], float] = {}  # (token, fact) -> when it was last seen absent (monotonic)
_LOCK = threading.Lock()


def mark_engine(engine: duckdb.DuckDBPyConnection) -> None:
    """Give a DuckDB (just attached to a lake) a token of its own: what an earlier lake it held
    was seen to contain is not this one's."""
    engine.execute("CREATE OR REPLACE TABLE " + TOKEN_TABLE + " AS SELECT $token AS token", {"token": uuid.uuid4().hex})


def _token(conn: duckdb.DuckDBPyConnection) -> str | None:
    try:
        row = conn.execute("SELECT token FROM " + TOKEN_TABLE).fetchone()
    except (duckdb.CatalogException, duckdb.BinderException):  # a DuckDB the lake module did not open
        return None
    return row[0] if row else None


def knows(conn: duckdb.DuckDBPyConnection, fact: str) -> bool:
    token = _token(conn)
    with _LOCK:
        return token is not None and fact in _KNOWN.get(token, ())


def absent_lately(conn: duckdb.DuckDBPyConnection, fact: str, within_s: float) -> bool:
    """Whether this DuckDB saw the fact false less than within_s ago: an optional table that
    another process may create (a judge calibration) is asked of the catalog at most that often."""
    token = _token(conn)
    with _LOCK:
        seen = _ABSENT.get((token, fact)) if token is not None else None
    return seen is not None and time.monotonic() - seen < within_s


def learn_absent(conn: duckdb.DuckDBPyConnection, fact: str) -> None:
    token = _token(conn)
    if token is not None:
        with _LOCK:
            _ABSENT[(token, fact)] = time.monotonic()


def learn(conn: duckdb.DuckDBPyConnection, *facts: str) -> None:
    token = _token(conn)
    if token is not None:
        with _LOCK:
            _KNOWN.setdefault(token, set()).update(facts)


def forget_everything() -> None:
    """A transaction failed: what it created may never have been committed (failures are rare;
    asking the catalog again is cheap next to being wrong)."""
    with _LOCK:
        _KNOWN.clear()
