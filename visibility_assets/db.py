"""One DuckDB transaction helper for the warehouse and the collection journals."""

from contextlib import contextmanager

import duckdb


@contextmanager
def transaction(conn: duckdb.DuckDBPyConnection):
    """BEGIN, then COMMIT, or ROLLBACK when the block raises."""
    conn.execute("BEGIN TRANSACTION")
    try:
        yield conn
    except BaseException:
        conn.execute("ROLLBACK")
        raise
    conn.execute("COMMIT")
