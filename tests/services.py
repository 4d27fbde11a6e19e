"""Tests that need a real server (RabbitMQ, PostgreSQL, ...): skip when it is not there, except
in CI, where a missing service is a broken CI setup and fails the test."""

from __future__ import annotations

import os
import secrets
import socket
from collections.abc import Iterator
from contextlib import contextmanager

import pytest

PG_HOST, PG_PORT = "127.0.0.1", 5432
PG_ADMIN_DSN = os.environ.get("VISIBILITY_TEST_PG_ADMIN", f"host={PG_HOST} port={PG_PORT} user=postgres dbname=postgres")


def in_ci() -> bool:
    return os.environ.get("CI", "").strip().lower() in ("true", "1", "yes")


def require_service(host: str, port: int, name: str, timeout: float = 2.0) -> None:
    """Return if something accepts TCP connections at host:port; otherwise skip the test with
    a message naming the service, or fail it when $CI is true."""
    try:
        with socket.create_connection((host, port), timeout=timeout):
            return
    except OSError as exc:
        message = f"{name} is not reachable at {host}:{port} ({exc})"
    if in_ci():
        pytest.fail(f"CI is set but {message}", pytrace=False)
    pytest.skip(f"{message}; start it to run this test (with CI=true its absence fails the test)")


@contextmanager
def scratch_database(prefix: str) -> Iterator[str]:
    """A PostgreSQL database of its own for one test (its name), dropped afterwards."""
    require_service(PG_HOST, PG_PORT, "PostgreSQL")
    import psycopg2  # installed with dagster-postgres

    name = prefix + "_" + secrets.token_hex(5)  # generated here, never user input
    admin = psycopg2.connect(PG_ADMIN_DSN, connect_timeout=3)
    admin.autocommit = True
    with admin.cursor() as cursor:
        cursor.execute("CREATE DATABASE " + name)
    try:
        yield name
    finally:
        with admin.cursor() as cursor:
            cursor.execute("DROP DATABASE IF EXISTS " + name + " WITH (FORCE)")
        admin.close()


def dagster_pg_url(database: str) -> str:
    return f"postgresql+psycopg2://postgres@{PG_HOST}:{PG_PORT}/{database}"
