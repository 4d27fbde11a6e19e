"""One question to one platform, in its dialect, with the one retry loop of the collector.

Every HTTP attempt is reported to `on_attempt` before the loop decides what to do next,
so the attempt ledger sees each one, including those of a request that later succeeds.
The same Idempotency-Key goes with every attempt of a request. A tool loop (Kimi's web
search) is one attempt: its rounds are sent back to back and their usage added up. A round that
fails is sent again by the next attempt, after the rounds that succeeded: starting over would ask
(and pay for) the search again.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import math
import random
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime

import httpx

from visibility_assets.collect.cost import request_cost
from visibility_assets.collect.dialects import Dialect, DialectError
from visibility_assets.collect.errors import ErrorClass, classify_exception, parse_rate_limit, unreachable_reason
from visibility_assets.collect.pacing import AdaptiveRateLimiter
from visibility_assets.collect.plan import PlannedRequest
from visibility_assets.collect.text_sources import with_text_citations
from visibility_assets.config import Platform, Price
from visibility_assets.core.answers import MODERATED, NormalizedAnswer
from visibility_assets.core.retry import backoff_s, parse_retry_after
from visibility_assets.core.secrets import SecretScrubber

SUCCEEDED, FAILED, DEFERRED, PENDING = "succeeded", "failed", "deferred", "pending"
# Attempts in a row, across the platform's requests, that found nothing at its address: then
# the platform is down (its breaker opens at once), not slow; a timeout or a 5xx keeps the
# retry loop's patience.
UNREACHABLE_ATTEMPTS = 4


@dataclass(frozen=True)
class RetrySettings:
    max_attempts: int = 6
    base_delay_s: float = 0.5
    max_delay_s: float = 30.0  # the longest backoff between attempts
    # The longest Retry-After (or window reset) waited out; a platform asking for more leaves
    # the request pending for a later run. A calendar-minute quota window fits.
    max_wait_s: float = 90.0

    def backoff(self, attempt: int, rng: random.Random) -> float:
        """Exponential backoff with full jitter: uniform in [0, base * 2^(attempt-1)]."""
        return backoff_s(attempt, self.base_delay_s, self.max_delay_s, rng)


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
    error_code: str | None = None  # the platform's own code for the failure
    tool_rounds: int | None = None


@dataclass
class Answer:
    normalized: NormalizedAnswer
    payload_json: str  # the platform's response verbatim; a tool loop's rounds as a JSON list
    attempt: Attempt
    cost: float | None = None
    currency: str | None = None

    @property
    def text(self) -> str:
        return self.normalized.text


@dataclass
class RequestOutcome:
    request: PlannedRequest
    state: str
    answer: Answer | None = None
    error_class: str | None = None
    error_message: str | None = None
    attempts: list[Attempt] = field(default_factory=list)
    # Left for a later run: the platform asked to wait this many seconds, beyond the retry cap.
    wait_asked_s: float | None = None


@dataclass
class ToolLoop:
    """A request's tool loop across its attempts: the body to send next, and the responses that
    asked for a tool (the rounds done, each already billed)."""

    question: dict
    asked: list[dict] = field(default_factory=list)
    body: dict = field(init=False)

    def __post_init__(self) -> None:
        self.body = self.question

    def restart(self) -> None:
        """From the question again: a round already done cannot be read."""
        self.asked, self.body = [], self.question


class _AttemptFailed(Exception):
    def __init__(self, error_class: ErrorClass, message: str, retry_after: float | None = None,
                 code: str | None = None, body_digest: str | None = None):
        self.error_class, self.message, self.retry_after, self.code = error_class, message, retry_after, code
        self.body_digest = body_digest  # a complete but malformed body: its hash, to notice a repeat
        super().__init__(message)


class ChatClient:
    def __init__(self, http: httpx.AsyncClient, platform: Platform, dialect: Dialect, limiter: AdaptiveRateLimiter,
                 retry: RetrySettings, run_id: str, headers: dict[str, str] | None = None,
                 price: Price | None = None, seed: int | None = None, timeout_s: float | None = None,
                 scrub: SecretScrubber | None = None, on_send: Callable[[Attempt], None] = lambda _: None,
                 on_wait: Callable[[PlannedRequest, float, str], None] = lambda *_: None,
                 on_tool_round: Callable[[], None] = lambda: None):
        self.http, self.platform, self.dialect, self.limiter, self.retry = http, platform, dialect, limiter, retry
        self.timeout_s = timeout_s or platform.timeout_s  # bounds a whole attempt, not each read
        self.scrub = scrub or SecretScrubber()
        self.on_send = on_send  # told of each attempt as its request goes out (in_flight.py)
        self.on_wait = on_wait  # told of each wait before a retry: the request, seconds, what it follows
        # Told when a round asks for a tool: the platform took the key, the model and the account.
        self.on_tool_round = on_tool_round
        self.url = dialect.url(platform)
        self.run_id, self.price = run_id, price
        self.headers = headers or {}
        self.rng = random.Random(seed)
        url = httpx.URL(self.url)
        self.address = f"{url.host}:{url.port or (443 if url.scheme == 'https' else 80)}"
        self.unreachable_in_a_row = 0  # attempts, across this platform's requests

    async def complete(self, request: PlannedRequest, first_attempt: int,
                       on_attempt: Callable[[Attempt], Awaitable[None]],
                       deadline: float | None = None) -> RequestOutcome:
        outcome = RequestOutcome(request, PENDING)
        loop = ToolLoop(request.body)
        malformed_bodies: set[str] = set()
        for number in range(first_attempt, first_attempt + self.retry.max_attempts):
            if deadline is not None and time.time() >= deadline:
                outcome.state = DEFERRED
                return outcome
            if not await self.limiter.acquire(self.retry.max_wait_s, _seconds_left(deadline)):
                return _postponed(outcome, self.limiter.wait_left(), deadline)
            attempt, answer, failure = await self._attempt(request, number, loop, deadline)
            outcome.attempts.append(attempt)
            await on_attempt(attempt)
            unreachable = failure is not None and failure.error_class is ErrorClass.UNREACHABLE
            self.unreachable_in_a_row = self.unreachable_in_a_row + 1 if unreachable else 0
            if answer is not None:
                outcome.state, outcome.answer = SUCCEEDED, answer
                return outcome
            outcome.error_class, outcome.error_message = failure.error_class.value, failure.message
            if not failure.error_class.transient or self.platform_down:
                break
            if failure.body_digest:
                if failure.body_digest in malformed_bodies:
                    # The same broken body twice: the platform answers this request so every time.
                    outcome.error_message += " (the same body on two attempts: not retried)"
                    break
                malformed_bodies.add(failure.body_digest)
            delay = failure.retry_after
            if failure.error_class is ErrorClass.RATE_LIMITED:
                self.limiter.throttled(failure.retry_after)
                delay = self.limiter.pause_left() or delay  # a quota window turns before its hint
            if delay is not None and delay > self.retry.max_wait_s:
                # Never retry before the platform said: a retry sent early only earns another refusal.
                return _postponed(outcome, delay, deadline)
            after = f"{failure.error_class.value}" + (f" (HTTP {attempt.http_status})" if attempt.http_status else "")
            if self.limiter.pause_left() > 0:
                self.on_wait(request, self.limiter.pause_left(), f"the platform's pause after {after}")
                continue  # the next slot waits out the platform's pause, with every other sender
            if delay is None:
                delay = self.retry.backoff(number - first_attempt + 1, self.rng)
            if delay > _seconds_left(deadline):
                outcome.state = DEFERRED  # the retry would come after the deadline
                return outcome
            self.on_wait(request, delay, after)
            await asyncio.sleep(delay)
        outcome.state = FAILED
        return outcome

    @property
    def platform_down(self) -> bool:
        """UNREACHABLE_ATTEMPTS attempts in a row found nothing at the platform's address."""
        return self.unreachable_in_a_row >= UNREACHABLE_ATTEMPTS

    async def _attempt(self, request: PlannedRequest, number: int, loop: ToolLoop, deadline: float | None = None):
        headers = {**self.headers, "Idempotency-Key": request.request_key, "X-Visibility-Date": request.date}
        started, clock = datetime.now(UTC), time.perf_counter()
        attempt = Attempt(request.request_key, number, self.run_id, started, started, 0.0)
        answer, failure = None, None
        try:
            # httpx's timeout applies to each read: a server that drips a byte at a time would
            # hold the attempt for ever. This one bounds connect, send, wait and read together.
            async with asyncio.timeout(self.timeout_s):
                normalized, payload_json = await self._exchange(loop, headers, attempt, deadline)
            attempt.finished_at = datetime.now(UTC)
            answer = self._answer(normalized, payload_json, attempt)
        except _AttemptFailed as exc:
            failure = exc
        except httpx.ConnectError as exc:
            reason = unreachable_reason(exc)
            message = f"cannot connect to {self.address}: {reason or exc}"
            failure = _AttemptFailed(classify_exception(exc), f"{type(exc).__name__}: {message}"[:500])
        except httpx.HTTPError as exc:
            failure = _AttemptFailed(classify_exception(exc), f"{type(exc).__name__}: {exc}"[:500])
        except TimeoutError:
            failure = _AttemptFailed(ErrorClass.TIMEOUT, f"no complete answer within timeout_s = {self.timeout_s:g} s")
        attempt.finished_at = datetime.now(UTC)
        attempt.latency_ms = (time.perf_counter() - clock) * 1000
        if failure:
            failure.message = self.scrub(failure.message)  # servers have quoted the key back
            attempt.error_class, attempt.error_message = failure.error_class.value, failure.message
            attempt.error_code = failure.code
        return attempt, answer, failure

    async def _exchange(self, loop: ToolLoop, headers: dict, attempt: Attempt,
                        deadline: float | None) -> tuple[NormalizedAnswer, str]:
        """Send the loop's next request, and the following rounds of a tool loop; the normalized
        answer. The rounds that asked for a tool stay in `loop` when a later round fails."""
        sent_requests, asks_question = 0, not loop.asked

        async def sent(event: str, _info: dict) -> None:
            # Logged as the request's body goes out (httpcore's trace), not when the attempt
            # begins: waiting for a pooled connection or a handshake sends the platform nothing.
            # Not at the body's "complete" either: the socket write yields to the event loop
            # after the bytes are out, and a kill during the other tasks' turn lost an attempt
            # the platform had received (1 run in 3). From "started" to the body's write nothing
            # yields, so a kill cannot fall between the log line and the bytes it records.
            if event.endswith("send_request_body.started") and not sent_requests:
                self.on_send(attempt)

        while True:
            response = await self.http.post(self.url, json=loop.body, headers=headers, extensions={"trace": sent})
            sent_requests += 1
            attempt.http_status = response.status_code
            remaining, reset = parse_rate_limit(response.headers)
            if remaining is not None and remaining <= 0 and reset:
                self.limiter.exhausted(reset)  # wait for the reset instead of earning a 429
            if not 200 <= response.status_code < 300:
                return self._refusal(response)
            try:
                payload = _json_body(response)
            except _AttemptFailed as exc:
                exc.body_digest = _digest(response)
                raise
            following = self.dialect.next_round(loop.body, payload)
            if following is None:
                break
            if len(loop.asked) >= self.dialect.max_tool_rounds:
                # Not retried: asking again would loop again, each round billed.
                raise _AttemptFailed(ErrorClass.CLIENT_ERROR,
                                     f"tool loop still asking after {self.dialect.max_tool_rounds} rounds")
            loop.asked.append(payload)
            loop.body = following
            self.on_tool_round()
            # Each round is a request the platform's rate limit counts.
            if not await self.limiter.acquire(self.retry.max_wait_s, _seconds_left(deadline)):
                raise _AttemptFailed(ErrorClass.RATE_LIMITED, "paused mid tool loop past the wait cap or the deadline",
                                     self.limiter.wait_left())
        payloads = [*loop.asked, payload]
        try:
            normalized = self.dialect.read_rounds(payloads)
        except DialectError as exc:
            loop.restart()
            digest = _digest(response) if exc.error_class is ErrorClass.MALFORMED else None
            raise _AttemptFailed(exc.error_class, f"{exc}"[:500], code=exc.code, body_digest=digest) from None
        # The requests this attempt sent back with a tool's result (a resumed loop sent no question).
        attempt.tool_rounds = sent_requests - asks_question
        return normalized, json.dumps(payloads[0] if len(payloads) == 1 else payloads, ensure_ascii=False)

    def _refusal(self, response: httpx.Response) -> tuple[NormalizedAnswer, str]:
        """A failed response: moderation is an outcome to store; anything else raises."""
        error_class, code = self.dialect.classify_error(response.status_code, response.text)
        if error_class is ErrorClass.MODERATED:
            return NormalizedAnswer(MODERATED, ""), response.text
        raise _AttemptFailed(error_class, f"HTTP {response.status_code}: {_error_text(response)}",
                             parse_retry_after(response.headers), code)

    def _answer(self, normalized: NormalizedAnswer, payload_json: str, attempt: Attempt) -> Answer:
        return priced_answer(normalized, payload_json, attempt, self.price, self.scrub)


def priced_answer(normalized: NormalizedAnswer, payload_json: str, attempt: Attempt, price: Price | None,
                  scrub: SecretScrubber) -> Answer:
    """A platform's answer as it is stored: secrets scrubbed, the text's own citations added, its
    tokens on the attempt, and its cost at the price of the moment it arrived."""
    normalized.text, normalized.reasoning_text = scrub(normalized.text), scrub(normalized.reasoning_text)
    payload_json = scrub(payload_json)
    normalized.citations = with_text_citations(normalized.citations, normalized.text)
    usage = normalized.usage
    attempt.prompt_tokens, attempt.completion_tokens = usage.prompt_tokens, usage.completion_tokens
    attempt.total_tokens = usage.total_tokens
    cost = request_cost(price, usage, normalized.search_used, attempt.finished_at)
    return Answer(normalized, payload_json, attempt, cost, price.currency if price else None)


def _seconds_left(deadline: float | None) -> float:
    return math.inf if deadline is None else max(0.0, deadline - time.time())


def _postponed(outcome: RequestOutcome, wait_s: float, deadline: float | None) -> RequestOutcome:
    """Leave the request for a later run: the platform asked to wait longer than the loop waits.

    Pending, not failed: it counts neither toward the breaker nor the failure share. Deferred
    instead when the wait ends past the deadline, like everything not sent by then.
    """
    ends_past_deadline = deadline is not None and time.time() + wait_s > deadline
    outcome.state = DEFERRED if ends_past_deadline else PENDING
    outcome.wait_asked_s = wait_s
    return outcome


def _digest(response: httpx.Response) -> str:
    return hashlib.sha256(response.content).hexdigest()


def _json_body(response: httpx.Response) -> dict:
    """The completion's JSON; blank keep-alive lines before it (DeepSeek, while queued) are fine."""
    try:
        text = response.content.decode(response.charset_encoding or "utf-8")
    except (UnicodeDecodeError, LookupError) as exc:
        raise _AttemptFailed(ErrorClass.MALFORMED, f"completion body is not valid text: {exc}"[:500]) from None
    try:
        payload = json.loads(text)
    except ValueError as exc:
        raise _AttemptFailed(ErrorClass.MALFORMED, f"malformed completion body: {exc}"[:500]) from None
    if not isinstance(payload, dict):
        raise _AttemptFailed(ErrorClass.MALFORMED, "completion body is not a JSON object")
    return payload


def _error_text(response: httpx.Response) -> str:
    try:
        data = response.json()
        message = data["error"]["message"] if isinstance(data.get("error"), dict) else data.get("message", data)
    except (ValueError, KeyError, TypeError, AttributeError):
        message = response.text
    return str(message)[:300]
