"""Failure classes of one HTTP attempt, and which of them are worth retrying."""

from __future__ import annotations

import re
import socket
import ssl
import time
from enum import Enum

import httpx


class ErrorClass(str, Enum):
    RATE_LIMITED = "rate_limited"  # 429
    SERVER_ERROR = "server_error"  # 5xx
    REQUEST_TIMEOUT = "request_timeout"  # 408
    TIMEOUT = "timeout"  # no answer within the client's timeout
    CONNECTION = "connection"  # reset or dropped mid-response
    UNREACHABLE = "unreachable"  # no connection at all: refused, the name not resolved, TLS failed
    MALFORMED = "malformed"  # 200 whose body is not a complete chat completion
    BAD_REQUEST = "bad_request"  # 400, 422
    AUTH = "auth"  # 401, 403
    NOT_FOUND = "not_found"  # 404
    MODERATED = "moderated"  # the platform's content moderation stopped the prompt: an outcome, not retried
    BILLING = "billing"  # balance, arrears or quota spent: only a payment helps; stops the platform
    OVERLOADED = "overloaded"  # the platform is busy (503, DeepSeek's insufficient_system_resource)
    CLIENT_ERROR = "client_error"  # any other 4xx

    @property
    def transient(self) -> bool:
        return self in TRANSIENT


TRANSIENT = frozenset({
    ErrorClass.RATE_LIMITED, ErrorClass.SERVER_ERROR, ErrorClass.REQUEST_TIMEOUT,
    ErrorClass.TIMEOUT, ErrorClass.CONNECTION, ErrorClass.MALFORMED, ErrorClass.OVERLOADED, ErrorClass.UNREACHABLE,
})

# Codes that platforms put in a 400 body when their content filter rejects the prompt.
CONTENT_POLICY_MARKERS = ("content_filter", "content_policy", "data_inspection_failed",
                          "sensitive", "risk", "moderation")


def classify_status(status: int, body: str = "") -> ErrorClass | None:
    """None for success; otherwise the class of the failure."""
    if 200 <= status < 300:
        return None
    if status == 429:
        return ErrorClass.RATE_LIMITED
    if status == 408:
        return ErrorClass.REQUEST_TIMEOUT
    if status == 503:
        return ErrorClass.OVERLOADED
    if status >= 500:
        return ErrorClass.SERVER_ERROR
    if status == 402:
        return ErrorClass.BILLING
    if status == 451 or (status in (400, 403, 422) and _mentions_content_policy(body)):
        return ErrorClass.MODERATED
    if status in (401, 403):
        return ErrorClass.AUTH
    if status == 404:
        return ErrorClass.NOT_FOUND
    if status in (400, 422):
        return ErrorClass.BAD_REQUEST
    return ErrorClass.CLIENT_ERROR


def _mentions_content_policy(body: str) -> bool:
    lowered = body.lower()
    return any(marker in lowered for marker in CONTENT_POLICY_MARKERS)


def classify_exception(exc: Exception) -> ErrorClass:
    if isinstance(exc, httpx.ConnectError) and unreachable_reason(exc):
        return ErrorClass.UNREACHABLE
    if isinstance(exc, httpx.TimeoutException):
        return ErrorClass.TIMEOUT
    if isinstance(exc, (httpx.RemoteProtocolError, httpx.DecodingError)):
        # The server closed or garbled the response part-way: a truncated answer.
        return ErrorClass.MALFORMED if "incomplete" in str(exc).lower() else ErrorClass.CONNECTION
    return ErrorClass.CONNECTION


def unreachable_reason(exc: BaseException) -> str | None:
    """Why no connection was made, read off the exception's causes: "connection refused", "name
    not resolved" or "TLS failure"; None for anything else (a timeout keeps its own patience)."""
    seen = 0
    while exc is not None and seen < 10:
        if isinstance(exc, ConnectionRefusedError):
            return "connection refused"
        if isinstance(exc, socket.gaierror):
            return "name not resolved"
        if isinstance(exc, ssl.SSLError):
            return "TLS failure"
        exc, seen = exc.__cause__ or exc.__context__, seen + 1
    return None


DURATION_PART = re.compile(r"(\d+(?:\.\d+)?)(ms|h|m|s)")
DURATION_UNITS = {"ms": 0.001, "s": 1.0, "m": 60.0, "h": 3600.0}


def parse_duration(value: str) -> float | None:
    """OpenAI's reset durations ("1s", "6m0s", "20ms") or plain seconds."""
    value = value.strip()
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    parts = DURATION_PART.findall(value)
    if not parts or "".join(n + u for n, u in parts) != value:
        return None
    return sum(float(n) * DURATION_UNITS[u] for n, u in parts)


def parse_rate_limit(headers: httpx.Headers, now: float | None = None) -> tuple[int | None, float | None]:
    """(requests remaining, seconds until the limit resets) from the rate-limit headers the
    platforms send: OpenAI and ERNIE `x-ratelimit-remaining-requests` / `-reset-requests`, Kimi
    `X-RateLimit-Remaining` / `-Reset` (seconds, or an epoch time)."""
    remaining_text = headers.get("x-ratelimit-remaining-requests") or headers.get("x-ratelimit-remaining")
    try:
        remaining = int(float(remaining_text)) if remaining_text else None
    except ValueError:
        remaining = None
    reset_text = headers.get("x-ratelimit-reset-requests") or headers.get("x-ratelimit-reset")
    reset = parse_duration(reset_text) if reset_text else None
    if reset is not None and reset > 1e9:  # an epoch time, not a duration
        reset = max(0.0, reset - (time.time() if now is None else now))
    return remaining, reset
