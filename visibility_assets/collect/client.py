"""One OpenAI-compatible Chat Completions call, with the one retry loop of the collector.

Every HTTP attempt is reported to `on_attempt` before the loop decides what to do next,
so the attempt ledger sees each one, including those of a request that later succeeds.
The same Idempotency-Key goes with every attempt of a request.
"""

from __future__ import annotations

import asyncio
import json
import random
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime

import httpx

from .errors import ErrorClass, classify_exception, classify_status, parse_retry_after
from .pacing import AdaptiveRateLimiter
from .plan import PlannedRequest

SUCCEEDED, FAILED, DEFERRED, PENDING = "succeeded", "failed", "deferred", "pending"


@dataclass(frozen=True)
class RetrySettings:
    max_attempts: int = 6
    base_delay_s: float = 0.5
    max_delay_s: float = 30.0

    def backoff(self, attempt: int, rng: random.Random) -> float:
        """Exponential backoff with full jitter: uniform in [0, base * 2^(attempt-1)]."""
        return rng.uniform(0, min(self.max_delay_s, self.base_delay_s * 2 ** (attempt - 1)))


@dataclass
class Attempt:
    request_key: str
    attempt: int
    run_id: str
    started_at: datetime
    finished_at: datetime
    latency_ms: float
    http_status: int | None = None
    error_class: str | None = None
    error_message: str | None = None
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    total_tokens: int | None = None


@dataclass
class Answer:
    text: str
    payload_json: str
    response_model: str | None
    attempt: Attempt


@dataclass
class RequestOutcome:
    request: PlannedRequest
    state: str
    answer: Answer | None = None
    error_class: str | None = None
    error_message: str | None = None
    attempts: list[Attempt] = field(default_factory=list)


class _AttemptFailed(Exception):
    def __init__(self, error_class: ErrorClass, message: str, retry_after: float | None = None):
        self.error_class, self.message, self.retry_after = error_class, message, retry_after
        super().__init__(message)


class ChatClient:
    def __init__(self, http: httpx.AsyncClient, url: str, limiter: AdaptiveRateLimiter,
                 retry: RetrySettings, run_id: str, headers: dict[str, str] | None = None,
                 seed: int | None = None):
        self.http, self.url, self.limiter, self.retry = http, url, limiter, retry
        self.run_id = run_id
        self.headers = headers or {}
        self.rng = random.Random(seed)

    async def complete(self, request: PlannedRequest, first_attempt: int,
                       on_attempt: Callable[[Attempt], Awaitable[None]],
                       deadline: float | None = None) -> RequestOutcome:
        outcome = RequestOutcome(request, PENDING)
        for number in range(first_attempt, first_attempt + self.retry.max_attempts):
            if deadline is not None and time.time() >= deadline:
                outcome.state = DEFERRED
                return outcome
            await self.limiter.acquire()
            attempt, answer, failure = await self._attempt(request, number)
            outcome.attempts.append(attempt)
            await on_attempt(attempt)
            if answer is not None:
                outcome.state, outcome.answer = SUCCEEDED, answer
                return outcome
            outcome.error_class, outcome.error_message = failure.error_class.value, failure.message
            if not failure.error_class.transient:
                break
            if failure.error_class is ErrorClass.RATE_LIMITED:
                self.limiter.throttled(failure.retry_after)
            delay = failure.retry_after
            if delay is None:
                delay = self.retry.backoff(number - first_attempt + 1, self.rng)
            await asyncio.sleep(min(delay, self.retry.max_delay_s))
        outcome.state = FAILED
        return outcome

    async def _attempt(self, request: PlannedRequest, number: int):
        headers = {**self.headers, "Idempotency-Key": request.request_key,
                   "X-Visibility-Date": request.date}
        started, clock = datetime.now(UTC), time.perf_counter()
        attempt = Attempt(request.request_key, number, self.run_id, started, started, 0.0)
        answer, failure = None, None
        try:
            response = await self.http.post(self.url, json=request.body, headers=headers)
            attempt.http_status = response.status_code
            answer = self._parse(response, attempt)
        except _AttemptFailed as exc:
            failure = exc
        except httpx.HTTPError as exc:
            failure = _AttemptFailed(classify_exception(exc), f"{type(exc).__name__}: {exc}"[:500])
        attempt.finished_at = datetime.now(UTC)
        attempt.latency_ms = (time.perf_counter() - clock) * 1000
        if failure:
            attempt.error_class, attempt.error_message = failure.error_class.value, failure.message
        return attempt, answer, failure

    def _parse(self, response: httpx.Response, attempt: Attempt) -> Answer:
        error_class = classify_status(response.status_code, response.text)
        if error_class is not None:
            raise _AttemptFailed(error_class, f"HTTP {response.status_code}: {_error_text(response)}",
                                 parse_retry_after(response.headers))
        try:
            payload = response.json()
            text = payload["choices"][0]["message"]["content"]
            if not isinstance(text, str):
                raise TypeError("content is not a string")
        except (ValueError, KeyError, IndexError, TypeError) as exc:
            raise _AttemptFailed(ErrorClass.MALFORMED, f"malformed completion body: {exc}"[:500]) from None
        usage = payload.get("usage") or {}
        attempt.prompt_tokens = usage.get("prompt_tokens")
        attempt.completion_tokens = usage.get("completion_tokens")
        attempt.total_tokens = usage.get("total_tokens")
        return Answer(text, json.dumps(payload, ensure_ascii=False), payload.get("model"), attempt)


def _error_text(response: httpx.Response) -> str:
    try:
        message = response.json()["error"]["message"]
    except (ValueError, KeyError, TypeError):
        message = response.text
    return str(message)[:300]
