"""The simulated platforms' request handling: limits, faults, outcomes, the tool loop, stats,
independent of the socket plumbing (server.py)."""

from __future__ import annotations

import email.utils
import hashlib
import json
import math
import random
import re
import time
from collections import Counter, OrderedDict, defaultdict
from dataclasses import dataclass, field

from visibility_assets.config import VisibilityConfig
from visibility_assets.tools.simulator.answers import SimBrand, compose_answer_detailed, sim_brands_by_category
from visibility_assets.tools.simulator.behaviour import (
    MODERATED,
    TRUNCATED,
    Fault,
    PlatformBehaviour,
    SimulatorSettings,
)
from visibility_assets.tools.simulator.dialects import (
    SIM_DIALECTS,
    Ask,
    BadRequest,
    Completion,
    ErrorReply,
    SimDialect,
    dialect_name,
    draw_sources,
    hidden_reasoning_tokens,
    reasoning_for,
    tokens,
)
from visibility_assets.tools.simulator.judge import JudgeBook

PATH_HEADER = ":path"  # the request path, handed to handle_chat with the headers
ADMIN_PREFIX, TOPUP_SUFFIX = "/_admin/", "/topup"
MAX_REMEMBERED_TOOL_CALLS = 100_000


class TokenBucket:
    """Server-side rate limit: `rate` requests per second with a burst of one second."""

    def __init__(self, rate: float):
        self.rate = rate
        self.capacity = max(1.0, rate)
        self.tokens = self.capacity
        self.updated = time.monotonic()

    def take(self) -> float:
        """Take a token; return 0 when granted, else the seconds until one is available."""
        now = time.monotonic()
        self.tokens = min(self.capacity, self.tokens + (now - self.updated) * self.rate)
        self.updated = now
        if self.tokens >= 1.0:
            self.tokens -= 1.0
            return 0.0
        return (1.0 - self.tokens) / self.rate

    def state(self) -> tuple[int, int, float]:
        """(limit, remaining, seconds until full) for rate-limit headers: the burst is the limit."""
        return int(self.capacity), int(self.tokens), (self.capacity - self.tokens) / self.rate


class FixedWindow:
    """`limit` requests per calendar window of `window_s` seconds, aligned to the wall clock."""

    def __init__(self, limit: int, window_s: float):
        self.limit, self.window_s = limit, window_s
        self.index: int | None = None
        self.count = 0

    def take(self, now: float | None = None) -> tuple[bool, int, float]:
        """(granted, remaining in this window, seconds until the next window)."""
        now = time.time() if now is None else now
        index = int(now // self.window_s)
        if index != self.index:
            self.index, self.count = index, 0
        reset = (index + 1) * self.window_s - now
        if self.count >= self.limit:
            return False, 0, reset
        self.count += 1
        return True, self.limit - self.count, reset


@dataclass
class PlatformStats:
    received: int = 0  # requests, not counting the later rounds of a tool loop
    status: Counter = field(default_factory=Counter)
    faults: Counter = field(default_factory=Counter)
    received_by_key: Counter = field(default_factory=Counter)
    answered_by_key: Counter = field(default_factory=Counter)  # an answer the collector stores
    tool_rounds: int = 0  # requests that sent a tool's result back (Kimi's $web_search)
    tool_rounds_by_key: Counter = field(default_factory=Counter)
    tool_echo_rejected: int = 0  # ... whose echo of the tool call's arguments was not verbatim
    searched: int = 0
    moderated: int = 0
    truncated: int = 0
    billing_errors: int = 0
    window_limited: int = 0
    judged: int = 0  # judge prompts answered

    def as_json(self) -> dict:
        duplicates = sum(n - 1 for n in self.answered_by_key.values() if n > 1)
        return {
            "received": self.received,
            "answered": sum(self.answered_by_key.values()),
            "duplicates": duplicates,
            "status": {str(k): v for k, v in sorted(self.status.items(), key=lambda kv: str(kv[0]))},
            "faults": dict(self.faults),
            "received_by_key": dict(self.received_by_key),
            "answered_by_key": dict(self.answered_by_key),
            "tool_rounds": self.tool_rounds,
            "tool_echo_rejected": self.tool_echo_rejected,
            "searched": self.searched,
            "moderated": self.moderated,
            "truncated": self.truncated,
            "billing_errors": self.billing_errors,
            "window_limited": self.window_limited,
            "judged": self.judged,
        }


class AnswerBook:
    """Maps a question to its category's brands, from the same config the pipeline uses."""

    def __init__(self, config: VisibilityConfig | None):
        self.by_question: dict[str, tuple[SimBrand, ...]] = {}
        self.fallback: tuple[SimBrand, ...] = ()
        if config is None:
            return
        by_category = sim_brands_by_category(config.catalog)
        for q in config.questions:
            self.by_question[q.text.strip()] = by_category.get(q.category, ())
        self.fallback = next(iter(by_category.values()), ())

    def brands_for(self, question: str) -> tuple[SimBrand, ...]:
        return self.by_question.get(question.strip(), self.fallback)


@dataclass(frozen=True)
class IssuedCall:
    """A tool call the platform issued: what must come back, and what the answer is made from."""

    arguments: str
    answer_digest: str  # the first round's body digest: the answer does not change with the round
    search_tokens: int
    first_prompt_tokens: int


class SimulatorApp:
    """Request handling, independent of the socket plumbing below."""

    def __init__(self, settings: SimulatorSettings, config: VisibilityConfig | None = None):
        self.settings = settings
        self.config = config
        self.answers = AnswerBook(config)
        self.buckets: dict[str, TokenBucket] = {}
        self.windows: dict[str, FixedWindow] = {}
        self.stats: dict[str, PlatformStats] = defaultdict(PlatformStats)
        self.dialects: dict[str, SimDialect] = {}
        # Platforms in arrears: seeded from the behaviour, emptied by a top-up.
        self.billing_blocked: set[str] = {name for name, b in settings.platforms.items() if b.billing_error}
        self.topped_up: set[str] = set()
        self.tool_calls: OrderedDict[tuple[str, str], IssuedCall] = OrderedDict()
        self.judges = JudgeBook()

    def dialect(self, platform: str) -> SimDialect:
        if platform not in self.dialects:
            self.dialects[platform] = SIM_DIALECTS[dialect_name(platform, self.config)]
        return self.dialects[platform]

    def bucket(self, platform: str, behaviour: PlatformBehaviour) -> TokenBucket | None:
        if behaviour.rate_limit_rps is None:
            return None
        if platform not in self.buckets:
            self.buckets[platform] = TokenBucket(behaviour.rate_limit_rps)
        return self.buckets[platform]

    def window(self, platform: str, behaviour: PlatformBehaviour) -> FixedWindow | None:
        if behaviour.window_limit is None:
            return None
        if platform not in self.windows:
            self.windows[platform] = FixedWindow(behaviour.window_limit, behaviour.window_s)
        return self.windows[platform]

    def in_arrears(self, platform: str, behaviour: PlatformBehaviour) -> bool:
        if platform in self.billing_blocked:
            return True
        if behaviour.billing_error and platform not in self.topped_up:  # the default behaviour's platforms
            self.billing_blocked.add(platform)
            return True
        return False

    def top_up(self, platform: str) -> None:
        self.billing_blocked.discard(platform)
        self.topped_up.add(platform)

    def remember_call(self, platform: str, call_id: str, issued: IssuedCall) -> None:
        self.tool_calls[(platform, call_id)] = issued
        while len(self.tool_calls) > MAX_REMEMBERED_TOOL_CALLS:
            self.tool_calls.popitem(last=False)

    def stats_json(self) -> dict:
        return {name: s.as_json() for name, s in sorted(self.stats.items())}


@dataclass
class Reply:
    status: int
    body: bytes
    headers: list[tuple[str, str]] = field(default_factory=list)
    fault: Fault = Fault.NONE
    delay_s: float = 0.0
    answered_key: str | None = None  # counted as answered once fully written
    content_type: str = "application/json"
    keepalive_s: float = 0.0  # a blank line this often while the answer waits (DeepSeek)
    drip_s: float | None = None  # the body two bytes at a time, this far apart


def json_reply(status: int, payload: dict, **kwargs) -> Reply:
    return Reply(status, json.dumps(payload, ensure_ascii=False).encode(), **kwargs)


def error_reply(status: int, message: str, kind: str, **kwargs) -> Reply:
    return json_reply(status, {"error": {"message": message, "type": kind, "code": status}}, **kwargs)


def _shaped(error: ErrorReply, **kwargs) -> Reply:
    return Reply(error.status, error.body, content_type=error.content_type, **kwargs)


def handle_chat(app: SimulatorApp, platform: str, headers: dict[str, str], body: bytes) -> Reply:
    settings = app.settings
    behaviour = settings.behaviour(platform)
    dialect = app.dialect(platform)
    stats = app.stats[platform]
    body_digest = hashlib.sha256(body).hexdigest()[:16]
    key = headers.get("idempotency-key") or body_digest
    ask: Ask | None = None
    problem = "Request body must be JSON with a user message."
    try:
        ask = dialect.read(json.loads(body), headers.get(PATH_HEADER, ""))
    except (ValueError, TypeError) as exc:  # BadRequest is a ValueError
        problem = str(exc) if isinstance(exc, BadRequest) else problem
    follow_up = ask is not None and bool(ask.tool_results)
    if follow_up:  # a later round of the same request: not a request of its own
        stats.tool_rounds += 1
        stats.tool_rounds_by_key[key] += 1
    else:
        stats.received += 1
        stats.received_by_key[key] += 1
    receipt = stats.received_by_key[key]
    ident = hashlib.sha256(f"{platform}|{key}".encode()).hexdigest()  # the answer's id: the same for a retry

    if behaviour.api_key and headers.get("authorization") != f"Bearer {behaviour.api_key}":
        return _shaped(dialect.auth_error(ident))
    if ask is None:
        return _shaped(dialect.bad_request(problem, ident))

    echoed = f" (request: authorization={headers.get('authorization')})" if behaviour.echo_credentials else ""
    if stats.received <= behaviour.outage_requests:
        return error_reply(503, "Service temporarily unavailable." + echoed, "server_error", fault=Fault.SERVER_ERROR)
    if app.in_arrears(platform, behaviour):
        stats.billing_errors += 1
        return _shaped(dialect.billing_error(ident))
    limit_headers: list[tuple[str, str]] = []
    window = app.window(platform, behaviour)
    if window is not None:
        granted, remaining, reset = window.take()
        if not granted:
            stats.window_limited += 1
            return _window_refusal(dialect, behaviour, ask.model, reset, ident)
        limit_headers = dialect.limit_headers(window.limit, remaining, reset)
    bucket = app.bucket(platform, behaviour)
    wait = bucket.take() if bucket else 0.0
    if wait > 0:
        return _throttled(dialect, behaviour, wait, ask.model, ident)
    if bucket is not None and window is None:
        limit_headers = dialect.limit_headers(*bucket.state())

    # A tool round sent again (its first try failed) draws its fault afresh, as a first round does.
    rng = random.Random(f"{settings.seed}|{platform}|{key}|{receipt}"
                        + (f"|tool{stats.tool_rounds_by_key[key]}" if follow_up else ""))
    fault = behaviour.draw_fault(rng)
    latency = behaviour.draw_latency(rng, settings.time_scale)
    if fault is Fault.THROTTLE:
        return _throttled(dialect, behaviour, 1.0, ask.model, ident)
    if fault is Fault.SERVER_ERROR:
        status = rng.choice((500, 502, 503))
        return error_reply(status, "The server is overloaded or not ready yet." + echoed, "server_error",
                      fault=fault, delay_s=latency * 0.2)
    if fault in (Fault.HANG, Fault.DROP):
        return Reply(0, b"", fault=fault, delay_s=behaviour.hang_s if fault is Fault.HANG else latency * 0.2)

    issued: IssuedCall | None = None
    if follow_up:
        issued, problem = _echoed_call(app, platform, ask)
        if issued is None:
            stats.tool_echo_rejected += 1
            return _shaped(dialect.bad_request(problem, ident), delay_s=latency * 0.2)

    # What becomes of the answer is the platform's verdict on the request: a retry sees the same.
    fate = behaviour.draw_outcome(random.Random(f"{settings.seed}|{platform}|{key}|fate"))
    if fate == MODERATED and not dialect.moderation_in_band:
        stats.moderated += 1
        return _shaped(dialect.moderation_error(ident), delay_s=latency * 0.2, answered_key=key)

    judged = app.judges.reply(ask.question, behaviour, random.Random(f"{settings.seed}|{platform}|{key}|judge"))
    if judged is not None:
        stats.judged += 1
        verdict = Completion(ident=ident, created=int(time.time()), model=ask.model, text=judged,
                             prompt_tokens=tokens(ask.question) + 8, completion_tokens=tokens(judged))
        return _faulty(json_reply(200, dialect.payload(verdict), headers=limit_headers, delay_s=latency,
                                  answered_key=key), fault, rng)

    # The answer depends on the request only, not on the receipt: a retry gets the same text.
    answer_digest = issued.answer_digest if issued else body_digest
    answer_rng = random.Random(f"{settings.seed}|{platform}|{answer_digest}|{key}")
    day = headers.get("x-visibility-date")
    brands = app.answers.brands_for(ask.question)
    extra_rng = random.Random(f"{settings.seed}|{platform}|{answer_digest}|{key}|extra")
    prompt_tokens = tokens(ask.question) + 8
    if ask.search and dialect.search_tool and issued is None:
        return _faulty(_tool_call(app, platform, dialect, ask, ident, receipt, body_digest, prompt_tokens,
                                  extra_rng, latency, limit_headers), fault, rng)

    composed = compose_answer_detailed(answer_rng, ask.question, brands, platform, day, behaviour.factors_on(day))
    text = composed.text
    switched_to = behaviour.model_on(day, ask.model)
    if switched_to is not None:
        text = written_by_new_model(text, extra_rng)
    completion = Completion(ident=ident, created=int(time.time()), model=switched_to or ask.model, text=text,
                            prompt_tokens=prompt_tokens)
    if issued is not None:  # Kimi's answer after its search: the search results are billed as prompt
        completion.prompt_tokens = issued.first_prompt_tokens + issued.search_tokens + tokens(issued.arguments)
        completion.searched = True
    elif ask.search:
        completion.searched = True
        if dialect.returns_sources:
            completion.sources = draw_sources(extra_rng, ask.question, brands, day)
        completion.prompt_tokens += 250 * max(2, len(completion.sources)) + int(extra_rng.random() * 400)
    if completion.searched:
        stats.searched += 1
    if ask.thinking:
        if dialect.reasoning_text or dialect.reasoning_inline:
            completion.reasoning = reasoning_for(ask.question, brands, extra_rng)
            completion.reasoning_tokens = tokens(completion.reasoning) + int(extra_rng.random() * 200)
        else:
            completion.reasoning_tokens = hidden_reasoning_tokens(extra_rng, ask.effort)
    if extra_rng.random() < behaviour.cache_hit_rate:
        completion.cached_tokens = int(completion.prompt_tokens * extra_rng.uniform(0.2, 0.8))
    if fate == TRUNCATED:
        stats.truncated += 1
        completion.finish_reason = "length"
        completion.text = text[:max(1, int(len(text) * extra_rng.uniform(0.3, 0.7)))]
    if completion.sources and composed.kind == "answer" and dialect.cites_over(composed.cited):
        completion.text, completion.spans = dialect.cite(completion.text or "", completion.sources, extra_rng)
    completion.completion_tokens = tokens(completion.text or "") + completion.reasoning_tokens
    if fate == MODERATED:  # in-band: a finish reason or a flag on a 200
        stats.moderated += 1
        dialect.moderated(completion)

    if composed.kind == "answer" and fate is None and switched_to is None:
        app.judges.remember(completion.text, composed)
    reply = json_reply(200, dialect.payload(completion), headers=limit_headers, delay_s=latency, answered_key=key)
    if dialect.keeps_alive and latency >= behaviour.keepalive_s:
        reply.keepalive_s = behaviour.keepalive_s  # blank lines while the request waits
    reply.drip_s = behaviour.drip_s
    if behaviour.broken_body:
        reply.body, reply.answered_key = BROKEN_BODIES[behaviour.broken_body], None
    return _faulty(reply, fault, rng)


# Bodies malformed the same way every time, whatever the request (behaviour.broken_body).
BROKEN_BODIES = {
    "empty_choices": b'{"id": "x", "object": "chat.completion", "choices": []}',
    "null_content": b'{"id": "x", "object": "chat.completion", "choices": [{"index": 0, "message":'
                    b' {"role": "assistant", "content": null}, "finish_reason": "stop"}]}',
    "json_array": b'[{"id": "x"}]',
    "invalid_utf8": b'{"id": "x", "choices": [{"message": {"content": "\xff\xfe broken"}}]}',
}


def _faulty(reply: Reply, fault: Fault, rng: random.Random) -> Reply:
    """A 200 spoilt by a body fault: cut somewhere in its middle (malformed: each attempt where
    it happens to be cut), or cut off mid-way by the socket."""
    if fault is Fault.MALFORMED:
        reply.body = reply.body[: max(1, int(len(reply.body) * rng.uniform(0.3, 0.7)))]
        reply.fault, reply.answered_key = fault, None
    elif fault is Fault.TRUNCATED:
        reply.fault, reply.answered_key = fault, None
    return reply


def search_query(question: str) -> str:
    """What a search for the question would look up: its words, without the asking."""
    return re.sub(r"[\s？?。！!，,：:]+", " ", question).strip()[:60]


def _tool_call(app: SimulatorApp, platform: str, dialect: SimDialect, ask: Ask, ident: str, receipt: int,
               body_digest: str, prompt_tokens: int, rng: random.Random, latency: float,
               limit_headers: list[tuple[str, str]]) -> Reply:
    """Kimi's first round of a search: finish_reason tool_calls with the $web_search call."""
    call_ident = hashlib.sha256(f"{ident}|{receipt}".encode()).hexdigest()
    search_tokens = 2000 + int(rng.random() * 12000)
    call = dialect.tool_call(call_ident, search_tokens, search_query(ask.question))
    prompt_tokens += 150  # the tool's declaration
    app.remember_call(platform, call["id"], IssuedCall(call["function"]["arguments"], body_digest, search_tokens,
                                                       prompt_tokens))
    completion = Completion(ident=ident, created=int(time.time()), model=ask.model, text="",
                            finish_reason="tool_calls", tool_calls=[call], prompt_tokens=prompt_tokens,
                            completion_tokens=10 + int(rng.random() * 10))
    return json_reply(200, dialect.payload(completion), headers=limit_headers, delay_s=latency * 0.5)


def _echoed_call(app: SimulatorApp, platform: str, ask: Ask) -> tuple[IssuedCall | None, str]:
    """The issued call a tool round answers, or None and why the round is refused: each tool
    message must answer a call the assistant message carries back, with its arguments verbatim."""
    sent_back = {call.get("id") for call in ask.tool_calls_echoed}
    found: IssuedCall | None = None
    for message in ask.tool_results:
        call_id = message.get("tool_call_id")
        issued = app.tool_calls.get((platform, call_id)) if isinstance(call_id, str) else None
        if issued is None:
            return None, f"Invalid request: tool_call_id {call_id!r} was not issued by the assistant"
        if call_id not in sent_back:
            return None, (f"Invalid request: the tool message {call_id!r} must follow the assistant message"
                          " with its tool_calls")
        if message.get("content") != issued.arguments:
            return None, (f"Invalid request: the content of tool message {call_id!r} must be the arguments of"
                          " the tool call, unchanged")
        found = issued
    return found, ""


def _window_refusal(dialect: SimDialect, behaviour: PlatformBehaviour, model: str, reset: float,
                    ident: str) -> Reply:
    error = dialect.rate_limit_error(model, behaviour.window_limit, reset, ident)
    headers = []
    if behaviour.window_retry_header is not None:
        # LiteLLM's proxy always says the window's length; a platform's Retry-After, what is left of it.
        wait = behaviour.window_s if behaviour.window_retry_header == "llm_provider-retry-after" else reset
        headers.append((behaviour.window_retry_header, str(max(1, math.ceil(wait)))))
    return _shaped(error, headers=headers, fault=Fault.THROTTLE)


def _throttled(dialect: SimDialect, behaviour: PlatformBehaviour, wait: float, model: str, ident: str) -> Reply:
    if behaviour.retry_after_format == "date":
        retry_after = email.utils.formatdate(time.time() + max(1.0, wait), usegmt=True)
    else:
        retry_after = str(max(1, math.ceil(wait)))
    limit = int(max(1.0, behaviour.rate_limit_rps or 1.0))
    headers = [("retry-after", retry_after), ("retry-after-ms", str(max(1, int(wait * 1000)))),
               *dialect.limit_headers(limit, 0, wait)]
    return _shaped(dialect.rate_limit_error(model, limit, wait, ident), headers=headers, fault=Fault.THROTTLE)


LIST_MARKER = re.compile(r"(?m)^([ \t]*)(?:[-*•]|\d{1,2}[.)、])[ \t]+")
NEW_MODEL_CODA = (
    "\n\n总的来说，具体选择还需要结合你的实际需求、预算和使用场景综合考虑；如果条件允许，建议先试用再做决定，"
    "并关注后续的版本更新与服务条款变化。",
    "\n\nIn short, the right choice depends on your needs, budget and context; where you can, try before you"
    " commit, and keep an eye on later releases and changes to the terms of service.",
)


def written_by_new_model(text: str, rng: random.Random) -> str:
    """How the switched-to model writes: prose where the old one listed, and a longer close."""
    if not text.strip():
        return text
    coda = NEW_MODEL_CODA[0] if any("\u4e00" <= ch <= "\u9fff" for ch in text[:200]) else NEW_MODEL_CODA[1]
    return LIST_MARKER.sub(r"\1", text) + coda * (1 + (rng.random() < 0.5))
