"""Tests that need a real server (RabbitMQ, PostgreSQL, ...): skip when it is not there, except
in CI, where a missing service is a broken CI setup and fails the test."""

from __future__ import annotations

import os
import socket

import pytest


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
