"""Delivering one AlertMessage to one webhook: one retry loop, and nothing secret in what it says.

A webhook URL carries the service's access token (DingTalk `access_token=`, WeCom `key=`, the
Feishu, Lark and Slack hook paths), and a signing secret signs each request. Neither may reach an
error, a log line or an exception text: those name the webhook and the URL's host only, and
every text that comes from elsewhere (httpx exceptions, response bodies) is scrubbed first.
"""

from __future__ import annotations

import json
import logging
import re
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, Protocol
from urllib.parse import parse_qsl, quote, quote_plus, urlsplit

import httpx

from visibility_assets.config.events import Webhook
from visibility_assets.core.retry import backoff_s, parse_retry_after
from visibility_assets.notify.formats import OutgoingRequest, render

LOG = logging.getLogger(__name__)

DELIVERED, FAILED, SKIPPED = "delivered", "failed", "skipped"

BACKOFF_BASE_S = 0.5  # doubled at each attempt ...
BACKOFF_CAP_S = 30.0  # ... up to this
RETRY_AFTER_CAP_S = 60.0  # a longer Retry-After is waited this long (the run should not hang on a chat)
RETRY_STATUSES = frozenset({408, 429})  # and every 5xx
ERROR_TEXT_LIMIT = 300

# The services' own codes, in a 200 body (and in Feishu's case sometimes a 400 one), that mean
# "try again later": rate limits and "system busy".
FEISHU_RETRY_CODES = frozenset({11232})  # frequency limited
FEISHU_TOO_MANY = 9499  # Feishu's generic "Bad Request" code: a rate limit only with "too many request"
DINGTALK_RETRY_CODES = frozenset({130101, 410100, -1})  # send too fast (20 a minute); system busy
WECOM_RETRY_CODES = frozenset({45009, -1})  # api freq out of limit (20 a minute); system busy


@dataclass(frozen=True)
class Delivery:
    webhook: str  # the webhook's name
    alert_id: str  # the message's id: an alert's, or a digest's
    state: str  # delivered | failed | skipped
    attempts: int
    http_status: int | None  # of the last attempt that got an answer
    error: str | None  # scrubbed: never the URL or the secret
    first_attempt_at: float | None  # epoch seconds; None when skipped
    finished_at: float


@dataclass(frozen=True)
class _Outcome:
    delivered: bool
    retry: bool = False
    error: str | None = None
    retry_after: float | None = None  # seconds the service asked us to wait


class Scrubber:
    """Replaces the URL, its token-bearing parts and the secret with *** in any text."""

    def __init__(self, url: str, secret: str | None) -> None:
        parts = urlsplit(url)
        sensitive = {url, parts.netloc + parts.path, parts.path, parts.query, parts.password or "", secret or ""}
        # Tokens live in path segments (Feishu, Lark, Slack) and query values (DingTalk, WeCom);
        # short pieces (`send`, `v2`) are left alone so that error texts stay readable.
        sensitive.update(s for s in parts.path.split("/") if len(s) >= 8)
        sensitive.update(v for _, v in parse_qsl(parts.query) if len(v) >= 8)
        encoded = {quote(s, safe="") for s in sensitive} | {quote_plus(s) for s in sensitive}
        self._sensitive = sorted((s for s in sensitive | encoded if s and s != "/"), key=len, reverse=True)

    def __call__(self, text: str) -> str:
        for value in self._sensitive:
            text = text.replace(value, "***")
        return text


class _ScrubbedHttpxLog(logging.Filter):
    """httpx logs every request with its full URL ("HTTP Request: POST https://...?access_token=...")
    at INFO: while a delivery runs, its URL and secret are scrubbed from the `httpx` logger's records."""

    def __init__(self) -> None:
        super().__init__()
        self._lock = threading.Lock()
        self._scrubbers: list[Scrubber] = []

    @contextmanager
    def scrubbing(self, scrub: Scrubber) -> Iterator[None]:
        with self._lock:
            self._scrubbers.append(scrub)
        try:
            yield
        finally:
            with self._lock:
                self._scrubbers.remove(scrub)

    def filter(self, record: logging.LogRecord) -> bool:
        with self._lock:
            scrubbers = list(self._scrubbers)
        if scrubbers:
            text = original = record.getMessage()
            for scrub in scrubbers:
                text = scrub(text)
            if text != original:
                record.msg, record.args = text, None
        return True


HTTPX_LOG = _ScrubbedHttpxLog()
logging.getLogger("httpx").addFilter(HTTPX_LOG)


class Message(Protocol):
    """What a webhook carries: an alert (notify/message.py) or a digest (notify/digest.py)."""

    @property
    def message_id(self) -> str: ...


Renderer = Callable[[str, Any, "str | None", float], OutgoingRequest]  # (format, message, secret, now)


def deliver(webhook: Webhook, message: Message, client: httpx.Client,
            sleep: Callable[[float], None] = time.sleep, now: Callable[[], float] = time.time,
            log: Any = LOG, render: Renderer = render) -> Delivery:
    """Send `message` (rendered by `render`, the alerts' renderers unless told) until the service accepts it, it refuses it for good, or the webhook's
    max_attempts are spent. Retried: connection errors, timeouts, 408, 429, 5xx and the services'
    rate-limit codes, after an exponential backoff with jitter (or the Retry-After asked for)."""
    url, secret = webhook.url(), webhook.secret()
    if url is None:
        return _skipped(webhook, message, f"environment variable {webhook.url_env} (the webhook URL) is not set", now)
    if webhook.secret_env and secret is None:
        # An unsigned request would only be refused (Feishu 19021, DingTalk 310000).
        return _skipped(webhook, message,
                        f"environment variable {webhook.secret_env} (the signing secret) is not set", now)
    scrub = Scrubber(url, secret)
    where = f"webhook {webhook.name} ({url_host(url)})"
    first_attempt_at, status, outcome = now(), None, _Outcome(False)
    attempt = 0
    with HTTPX_LOG.scrubbing(scrub):
        while attempt < webhook.max_attempts:
            attempt += 1
            # Rendered again each time: the signatures carry a timestamp that expires.
            request = render(webhook.format, message, secret, now())
            status, outcome = _attempt(client, url, request, webhook, scrub)
            if outcome.delivered or not outcome.retry or attempt == webhook.max_attempts:
                break
            delay = _delay(attempt, outcome.retry_after)
            log.info(f"{where}: attempt {attempt} for {message.message_id[:12]} failed ({outcome.error}),"
                     f" retrying in {delay:.1f} s")
            sleep(delay)
    state = DELIVERED if outcome.delivered else FAILED
    return Delivery(webhook.name, message.message_id, state, attempt, status, outcome.error, first_attempt_at, now())


def _skipped(webhook: Webhook, message: Message, error: str, now: Callable[[], float]) -> Delivery:
    return Delivery(webhook.name, message.message_id, SKIPPED, 0, None, error, None, now())


def _attempt(client: httpx.Client, url: str, request: OutgoingRequest, webhook: Webhook,
             scrub: Scrubber) -> tuple[int | None, _Outcome]:
    try:
        # Merged into the URL's own query: httpx's `params=` would replace DingTalk's access_token.
        target = httpx.URL(url).copy_merge_params(request.params)
        response = client.post(target, json=request.json, timeout=webhook.timeout_s)
    except httpx.TimeoutException as exc:
        return None, _Outcome(False, retry=True, error=f"timed out after {webhook.timeout_s:g} s ({type(exc).__name__})")
    except (httpx.NetworkError, httpx.RemoteProtocolError, httpx.ProxyError) as exc:
        return None, _Outcome(False, retry=True, error=_clip(f"{type(exc).__name__}: {scrub(str(exc))}"))
    except (httpx.HTTPError, httpx.InvalidURL) as exc:  # unsupported scheme, malformed URL: no retry helps
        return None, _Outcome(False, error=_clip(f"{type(exc).__name__}: {scrub(str(exc))}"))
    return response.status_code, _judge(webhook.format, response, scrub)


def _judge(format: str, response: httpx.Response, scrub: Callable[[str], str] = str) -> _Outcome:
    """Whether the service took the message: the HTTP status, then the service's own code, since
    Feishu, DingTalk and WeCom answer 200 with an error in the body."""
    status, text = response.status_code, response.text
    code, reason = _service_code(format, text)
    said = f"{format} code {code}: {scrub(str(reason))}" if code not in (None, 0) else None
    retry_after = parse_retry_after(response.headers)
    if code not in (None, 0) and _service_retries(format, code, reason):
        return _Outcome(False, retry=True, error=_clip(f"HTTP {status}, {said}"), retry_after=retry_after)
    if not 200 <= status < 300:
        error = f"HTTP {status}, {said}" if said else f"HTTP {status}: {_excerpt(text, scrub)}"
        retry = status in RETRY_STATUSES or status >= 500
        return _Outcome(False, retry=retry, error=_clip(error), retry_after=retry_after if retry else None)
    if format == "json":
        return _Outcome(True)
    if format == "slack":
        # Slack's incoming webhooks answer exactly "ok"; anything else is an error name.
        return _Outcome(True) if text.strip() == "ok" else _Outcome(False, error=_clip(f"slack: {_excerpt(text, scrub)}"))
    if code == 0:
        return _Outcome(True)
    if code is None:
        return _Outcome(False, error=_clip(f"HTTP {status} without a {format} result code: {_excerpt(text, scrub)}"))
    return _Outcome(False, error=_clip(said or ""))


def _service_code(format: str, text: str) -> tuple[int | None, str | None]:
    """The service's result code and message from a JSON body: Feishu/Lark `code`/`msg` (older
    hooks `StatusCode`/`StatusMessage`), DingTalk and WeCom `errcode`/`errmsg`."""
    keys = {"feishu": ("code", "msg", "StatusCode", "StatusMessage"),
            "lark": ("code", "msg", "StatusCode", "StatusMessage"),
            "dingtalk": ("errcode", "errmsg"), "wecom": ("errcode", "errmsg")}.get(format)
    if keys is None:
        return None, None
    try:
        body = json.loads(text)
    except ValueError:
        return None, None
    if not isinstance(body, dict):
        return None, None
    for code_key, message_key in zip(keys[::2], keys[1::2]):
        if code_key in body:
            try:
                return int(body[code_key]), body.get(message_key)
            except (TypeError, ValueError):
                return None, None
    return None, None


def _service_retries(format: str, code: int, reason: str | None) -> bool:
    if format in ("feishu", "lark"):
        return code in FEISHU_RETRY_CODES or (code == FEISHU_TOO_MANY and "too many" in str(reason).lower())
    if format == "dingtalk":
        return code in DINGTALK_RETRY_CODES
    if format == "wecom":
        return code in WECOM_RETRY_CODES
    return False


def _delay(attempt: int, retry_after: float | None) -> float:
    """0.5 s doubling to 30 s, half of it random (so that runs retrying together spread out),
    or the service's Retry-After when longer, up to RETRY_AFTER_CAP_S."""
    backoff = backoff_s(attempt, BACKOFF_BASE_S, BACKOFF_CAP_S, fixed_share=0.5)
    if retry_after is None:
        return backoff
    return min(RETRY_AFTER_CAP_S, max(backoff, retry_after))


def url_host(url: str | None) -> str:
    """The only part of a webhook URL that may be shown."""
    return (urlsplit(url).hostname if url else None) or "?"


def _excerpt(text: str, scrub: Callable[[str], str]) -> str:
    # Scrubbed before it is cut: a cut could split a token and leave a piece no scrubbing matches.
    return re.sub(r"\s+", " ", scrub(text)).strip()[:200] or "(empty body)"


def _clip(text: str) -> str:
    return text if len(text) <= ERROR_TEXT_LIMIT else text[:ERROR_TEXT_LIMIT - 1] + "…"
