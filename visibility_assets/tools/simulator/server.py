"""The simulated AI platforms: an OpenAI-compatible Chat Completions server on loopback.

`POST /<platform>/v1/chat/completions` answers like a real assistant would; each platform
can be told to misbehave (see behaviour.py). The server speaks HTTP/1.1 through h11 on
plain asyncio streams, because faults such as dropped connections and truncated bodies
need control below what a web framework exposes.

`GET /_stats` returns what was received, per platform and per request key, so tests can
prove that nothing was asked twice; `GET /health` says the simulator is up.
"""

from __future__ import annotations

import asyncio
import email.utils
import hashlib
import json
import math
import random
import threading
import time
from collections import Counter, defaultdict
from dataclasses import dataclass, field

import h11

from ...config import VisibilityConfig
from .answers import SimBrand, compose_answer, sim_brands_by_category
from .behaviour import Fault, PlatformBehaviour, SimulatorSettings

CHAT_PATH_SUFFIX = "/v1/chat/completions"


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


@dataclass
class PlatformStats:
    received: int = 0
    status: Counter = field(default_factory=Counter)
    faults: Counter = field(default_factory=Counter)
    received_by_key: Counter = field(default_factory=Counter)
    answered_by_key: Counter = field(default_factory=Counter)  # 200 with a complete answer

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


class SimulatorApp:
    """Request handling, independent of the socket plumbing below."""

    def __init__(self, settings: SimulatorSettings, config: VisibilityConfig | None = None):
        self.settings = settings
        self.answers = AnswerBook(config)
        self.buckets: dict[str, TokenBucket] = {}
        self.stats: dict[str, PlatformStats] = defaultdict(PlatformStats)

    def bucket(self, platform: str, behaviour: PlatformBehaviour) -> TokenBucket | None:
        if behaviour.rate_limit_rps is None:
            return None
        if platform not in self.buckets:
            self.buckets[platform] = TokenBucket(behaviour.rate_limit_rps)
        return self.buckets[platform]

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


def _json_reply(status: int, payload: dict, **kwargs) -> Reply:
    return Reply(status, json.dumps(payload, ensure_ascii=False).encode(), **kwargs)


def _error(status: int, message: str, kind: str, **kwargs) -> Reply:
    return _json_reply(status, {"error": {"message": message, "type": kind, "code": status}}, **kwargs)


def handle_chat(app: SimulatorApp, platform: str, headers: dict[str, str], body: bytes) -> Reply:
    settings = app.settings
    behaviour = settings.behaviour(platform)
    stats = app.stats[platform]
    stats.received += 1
    body_digest = hashlib.sha256(body).hexdigest()[:16]
    key = headers.get("idempotency-key") or body_digest
    stats.received_by_key[key] += 1
    receipt = stats.received_by_key[key]

    if behaviour.api_key and headers.get("authorization") != f"Bearer {behaviour.api_key}":
        return _error(401, "Incorrect API key provided.", "invalid_request_error")
    try:
        request = json.loads(body)
        question = next(m["content"] for m in reversed(request["messages"]) if m.get("role") == "user")
        model = request.get("model") or "sim"
    except (ValueError, KeyError, TypeError, StopIteration):
        return _error(400, "Request body must be JSON with a user message.", "invalid_request_error")

    if stats.received <= behaviour.outage_requests:
        return _error(503, "Service temporarily unavailable.", "server_error", fault=Fault.SERVER_ERROR)
    bucket = app.bucket(platform, behaviour)
    wait = bucket.take() if bucket else 0.0
    if wait > 0:
        return _throttled(behaviour, wait)

    rng = random.Random(f"{settings.seed}|{platform}|{key}|{receipt}")
    fault = behaviour.draw_fault(rng)
    latency = behaviour.draw_latency(rng, settings.time_scale)
    if fault is Fault.THROTTLE:
        return _throttled(behaviour, 1.0)
    if fault is Fault.SERVER_ERROR:
        status = rng.choice((500, 502, 503))
        return _error(status, "The server is overloaded or not ready yet.", "server_error",
                      fault=fault, delay_s=latency * 0.2)
    if fault in (Fault.HANG, Fault.DROP):
        return Reply(0, b"", fault=fault, delay_s=behaviour.hang_s if fault is Fault.HANG else latency * 0.2)

    # The answer depends on the request only, not on the receipt: a retry gets the same text.
    answer_rng = random.Random(f"{settings.seed}|{platform}|{body_digest}|{key}")
    day = headers.get("x-visibility-date")
    text = compose_answer(answer_rng, question, app.answers.brands_for(question), platform, day)
    payload = {
        "id": "chatcmpl-" + hashlib.sha256(f"{platform}|{key}".encode()).hexdigest()[:24],
        "object": "chat.completion",
        "created": int(time.time()),
        "model": model,
        "choices": [{"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}],
        "usage": _usage(question, text),
    }
    reply = _json_reply(200, payload, delay_s=latency, answered_key=key)
    if fault is Fault.MALFORMED:
        reply.body = reply.body[: max(1, len(reply.body) // 2)]
        reply.fault, reply.answered_key = fault, None
    elif fault is Fault.TRUNCATED:
        reply.fault, reply.answered_key = fault, None
    return reply


def _throttled(behaviour: PlatformBehaviour, wait: float) -> Reply:
    if behaviour.retry_after_format == "date":
        retry_after = email.utils.formatdate(time.time() + max(1.0, wait), usegmt=True)
    else:
        retry_after = str(max(1, math.ceil(wait)))
    headers = [("retry-after", retry_after), ("retry-after-ms", str(max(1, int(wait * 1000))))]
    return _error(429, "Rate limit reached for requests.", "rate_limit_error", headers=headers,
                  fault=Fault.THROTTLE)


def _usage(question: str, text: str) -> dict:
    # Roughly what a tokenizer would count: a CJK character or about four Latin letters a token.
    def tokens(s: str) -> int:
        cjk = sum(1 for c in s if "\u4e00" <= c <= "\u9fff")
        return cjk + (len(s) - cjk) // 4 + 1

    prompt, completion = tokens(question) + 8, tokens(text)
    return {"prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": prompt + completion}


# --- HTTP plumbing ----------------------------------------------------------------------

class SimulatorServer:
    """Runs SimulatorApp on 127.0.0.1, in the foreground or in a background thread."""

    def __init__(self, settings: SimulatorSettings, config: VisibilityConfig | None = None,
                 host: str = "127.0.0.1", port: int = 0):
        self.app = SimulatorApp(settings, config)
        self.host, self.port = host, port
        self._loop: asyncio.AbstractEventLoop | None = None
        self._server: asyncio.AbstractServer | None = None
        self._thread: threading.Thread | None = None
        self._tasks: set[asyncio.Task] = set()

    @property
    def url(self) -> str:
        return f"http://{self.host}:{self.port}"

    async def serve(self, ready: threading.Event | None = None) -> None:
        self._loop = asyncio.get_running_loop()
        self._server = await asyncio.start_server(self._on_connection, self.host, self.port, backlog=1024)
        self.port = self._server.sockets[0].getsockname()[1]
        if ready:
            ready.set()
        async with self._server:
            await self._server.serve_forever()

    def start_in_thread(self) -> SimulatorServer:
        ready = threading.Event()
        failure: list[BaseException] = []

        def run():
            try:
                asyncio.run(self.serve(ready))
            except asyncio.CancelledError:
                pass
            except BaseException as exc:  # surfaced to the caller below
                failure.append(exc)
                ready.set()

        self._thread = threading.Thread(target=run, name="visibility-simulator", daemon=True)
        self._thread.start()
        ready.wait(10)
        if failure:
            raise failure[0]
        return self

    def stop(self) -> None:
        if self._loop and self._server:
            def shutdown():
                self._server.close()
                for task in list(self._tasks):
                    task.cancel()
                for task in asyncio.all_tasks(self._loop):
                    task.cancel()
            self._loop.call_soon_threadsafe(shutdown)
        if self._thread:
            self._thread.join(10)

    def __enter__(self) -> SimulatorServer:
        return self.start_in_thread()

    def __exit__(self, *exc) -> None:
        self.stop()

    async def _on_connection(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        self._tasks.add(task)
        conn = h11.Connection(h11.SERVER)
        try:
            while True:
                request, body = await _read_request(conn, reader)
                if request is None:
                    return
                keep_open = await self._respond(conn, writer, request, body)
                if not keep_open or conn.our_state is h11.MUST_CLOSE:
                    return
                conn.start_next_cycle()
        except (ConnectionError, h11.ProtocolError, asyncio.IncompleteReadError, asyncio.CancelledError):
            return  # the client went away, or the server is shutting down
        finally:
            self._tasks.discard(task)
            writer.close()

    async def _respond(self, conn: h11.Connection, writer: asyncio.StreamWriter,
                       request: h11.Request, body: bytes) -> bool:
        path = request.target.decode("latin-1").split("?", 1)[0]
        headers = {k.decode().lower(): v.decode("latin-1") for k, v in request.headers}
        if request.method == b"GET" and path == "/health":
            reply = _json_reply(200, {"simulator": True, "seed": self.app.settings.seed})
        elif request.method == b"GET" and path == "/_stats":
            reply = _json_reply(200, self.app.stats_json())
        elif request.method == b"POST" and path.endswith(CHAT_PATH_SUFFIX):
            platform = path[: -len(CHAT_PATH_SUFFIX)].strip("/")
            known = self.app.settings.known_platforms
            if not platform or "/" in platform or (known is not None and platform not in known):
                reply = _error(404, f"unknown platform {platform!r}", "not_found")
            else:
                reply = handle_chat(self.app, platform, headers, body)
                await asyncio.sleep(reply.delay_s)
                self.app.stats[platform].status[reply.status or reply.fault.value] += 1
                self.app.stats[platform].faults[reply.fault.value] += 1
        else:
            reply = _error(404, f"no route for {request.method.decode()} {path}", "not_found")

        if reply.fault in (Fault.HANG, Fault.DROP):
            writer.transport.abort()
            return False
        declared = len(reply.body) * (2 if reply.fault is Fault.TRUNCATED else 1)
        headers_out = [("content-type", "application/json"), ("content-length", str(declared)),
                       *reply.headers]
        writer.write(conn.send(h11.Response(status_code=reply.status, headers=headers_out)))
        writer.write(conn.send(h11.Data(data=reply.body)))
        if reply.fault is Fault.TRUNCATED:
            await writer.drain()
            writer.transport.abort()
            return False
        writer.write(conn.send(h11.EndOfMessage()))
        await writer.drain()
        if reply.answered_key:
            self.app.stats[platform].answered_by_key[reply.answered_key] += 1
        return True


async def _read_request(conn: h11.Connection, reader: asyncio.StreamReader):
    request, chunks = None, []
    while True:
        event = conn.next_event()
        if event is h11.NEED_DATA:
            conn.receive_data(await reader.read(65536))
        elif isinstance(event, h11.Request):
            request = event
        elif isinstance(event, h11.Data):
            chunks.append(event.data)
        elif isinstance(event, h11.EndOfMessage):
            return request, b"".join(chunks)
        elif isinstance(event, h11.ConnectionClosed):
            return None, b""
