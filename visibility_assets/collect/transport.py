"""Where the collector's requests go: over the network, or to a transport mounted in this
process for a base URL (the simulated platforms of a test or a benchmark, in process). httpx
routes each request by its URL's scheme and host to the transport mounted for them."""

from __future__ import annotations

import functools
import ssl
import threading
from collections.abc import Iterator
from contextlib import contextmanager

import httpx

_MOUNTED: dict[str, httpx.AsyncBaseTransport] = {}


@contextmanager
def mounted(url: str, transport: httpx.AsyncBaseTransport) -> Iterator[None]:
    """Requests to `url` (scheme://host[:port]) go to `transport` while the block runs."""
    _MOUNTED[url] = transport
    try:
        yield
    finally:
        _MOUNTED.pop(url, None)


def mounts() -> dict[str, httpx.AsyncBaseTransport]:
    """The mounts of the collector's HTTP clients; none outside tests and benchmarks."""
    return dict(_MOUNTED)


_TLS_LOCK = threading.Lock()


def tls_context() -> ssl.SSLContext:
    """The certificate checks of every client in this process. httpx builds a context per client
    by default, loading the CA bundle: 60-90 ms of CPU each, which held up the other platforms
    sharing the event loop (and their pacing) while a platform started. Built once under a lock:
    the platforms' setups ask for it from threads at the same moment."""
    with _TLS_LOCK:
        return _tls_context()


@functools.cache
def _tls_context() -> ssl.SSLContext:
    return httpx.create_ssl_context()
