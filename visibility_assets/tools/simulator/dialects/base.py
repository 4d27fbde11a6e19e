"""The request and reply of a simulated platform, and the OpenAI-compatible way of speaking that
each dialect adapts (one module per platform beside this one)."""

from __future__ import annotations

import json
import random
from dataclasses import dataclass, field
from typing import Any

from visibility_assets.config import VisibilityConfig
from visibility_assets.config.schema import DIALECTS as DIALECT_NAMES
from visibility_assets.tools.simulator.answers import SimBrand
from visibility_assets.tools.simulator.answers.inputs import has_cjk, read_question
from visibility_assets.tools.simulator.dialects.sources import Source, cite_in_text

KIMI_WEB_SEARCH = "$web_search"
BOT_PATH_SUFFIX = "/v1/bots/chat/completions"
CHAT_PATH_SUFFIX = "/v1/chat/completions"


def dialect_name(platform: str, config: VisibilityConfig | None) -> str:
    """The dialect a simulated platform speaks: the config's, else its name if that is a
    dialect, else openai."""
    if config is not None:
        for entry in config.platforms:
            if entry.name == platform:
                return entry.dialect
    return platform if platform in DIALECT_NAMES else "openai"


def tokens(text: str) -> int:
    """Roughly what a tokenizer would count: a CJK character or about four Latin letters a token."""
    cjk = sum(1 for c in text if "\u4e00" <= c <= "\u9fff")
    return cjk + (len(text) - cjk) // 4 + 1


# --- what a request asks ------------------------------------------------------------------

@dataclass
class Ask:
    """One request as the platform reads it."""

    question: str
    model: str
    search: bool = False
    thinking: bool = False
    effort: str | None = None  # OpenAI's reasoning_effort
    tool_results: list[dict] = field(default_factory=list)  # Kimi: the `role: tool` messages
    tool_calls_echoed: list[dict] = field(default_factory=list)  # Kimi: the assistant's tool_calls sent back


class BadRequest(ValueError):
    """The request cannot be read (400 in the platform's invalid-request shape)."""


# --- what an answer holds -----------------------------------------------------------------



@dataclass
class Completion:
    """A 200 answer before the dialect shapes it."""

    ident: str  # hex digest the platform's own id is made from
    created: int
    model: str
    text: str | None  # None: the platform leaves content null (OpenAI's content_filter)
    finish_reason: str = "stop"
    reasoning: str | None = None  # reasoning text, where the platform returns it
    reasoning_tokens: int = 0
    sources: list[Source] = field(default_factory=list)
    spans: list[tuple[int, int, int]] = field(default_factory=list)  # (source, start, end) in text
    searched: bool = False
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cached_tokens: int = 0
    moderated: bool = False  # moderated in-band (a finish reason or a flag)
    tool_calls: list[dict] | None = None  # Kimi's first round

    @property
    def total_tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens


@dataclass
class ErrorReply:
    status: int
    body: bytes
    content_type: str = "application/json"


def _json_error(status: int, payload: dict) -> ErrorReply:
    return ErrorReply(status, json.dumps(payload, ensure_ascii=False).encode())


# --- the dialects --------------------------------------------------------------------------

class SimDialect:
    """The OpenAI-compatible core every platform shares; subclasses change what differs."""

    name = "openai"
    search_marker = "[{n}]"  # how the answer text cites source n
    returns_sources = True  # False: searches, but the response has no structured sources
    reasoning_text = True  # False: reasoning tokens only (OpenAI)
    reasoning_inline = False  # the reasoning goes into the content, in a <think> block (Perplexity)
    moderation_in_band = False  # True: a 200 with a finish reason / flag; False: an error
    search_tool = False  # web search is a tool call the client must answer (Kimi's $web_search)
    keeps_alive = False  # blank lines before a slow non-streaming answer (DeepSeek)
    id_prefix = "chatcmpl-"

    # --- reading the request ---

    def read(self, request: Any, path: str) -> Ask:
        if not isinstance(request, dict) or not isinstance(request.get("messages"), list):
            raise BadRequest("Request body must be JSON with a messages list.")
        messages = request["messages"]
        try:
            question = next(m["content"] for m in reversed(messages)
                            if isinstance(m, dict) and m.get("role") == "user")
        except (KeyError, StopIteration):
            raise BadRequest("Request body must be JSON with a user message.") from None
        if not isinstance(question, str):
            raise BadRequest("The user message content must be a string.")
        model = request.get("model") or "sim"
        if not isinstance(model, str):
            raise BadRequest("model must be a string.")
        effort = request.get("reasoning_effort")
        return Ask(question, model, search=self.wants_search(request, path),
                   thinking=self.wants_thinking(request, model), effort=effort if isinstance(effort, str) else None)

    def wants_search(self, request: dict, path: str) -> bool:
        return "web_search_options" in request

    def wants_thinking(self, request: dict, model: str) -> bool:
        return request.get("reasoning_effort") not in (None, "none")

    # --- the answer ---

    def payload(self, c: Completion) -> dict:
        message: dict[str, Any] = {"role": "assistant", "content": c.text}
        if c.reasoning and self.reasoning_text:
            message["reasoning_content"] = c.reasoning
        if c.tool_calls:
            message["tool_calls"] = c.tool_calls
        choice: dict[str, Any] = {"index": 0, "message": message, "finish_reason": c.finish_reason}
        body: dict[str, Any] = {"id": self.id_prefix + c.ident[:24], "object": "chat.completion",
                                "created": c.created, "model": c.model, "choices": [choice],
                                "usage": self.usage(c)}
        self.decorate(body, choice, message, c)
        return body

    def decorate(self, body: dict, choice: dict, message: dict, c: Completion) -> None:
        """Add what the platform puts beside the common fields (sources, flags ...)."""
        message["refusal"] = None
        message["annotations"] = [
            {"type": "url_citation", "url_citation": {"url": c.sources[i].url, "title": c.sources[i].title,
                                                      "start_index": start, "end_index": end}}
            for i, start, end in c.spans]
        choice["logprobs"] = None
        body["service_tier"] = "default"

    def usage(self, c: Completion) -> dict:
        usage = {"prompt_tokens": c.prompt_tokens, "completion_tokens": c.completion_tokens,
                 "total_tokens": c.total_tokens}
        self.usage_details(usage, c)
        return usage

    def usage_details(self, usage: dict, c: Completion) -> None:
        usage["prompt_tokens_details"] = {"cached_tokens": c.cached_tokens, "audio_tokens": 0}
        usage["completion_tokens_details"] = {"reasoning_tokens": c.reasoning_tokens, "audio_tokens": 0,
                                              "accepted_prediction_tokens": 0, "rejected_prediction_tokens": 0}

    def moderated(self, c: Completion) -> None:
        """Turn `c` into the platform's in-band moderated answer (only when moderation_in_band)."""
        c.finish_reason, c.text, c.moderated = "content_filter", None, True
        c.reasoning, c.reasoning_tokens, c.sources, c.spans = None, 0, [], []
        c.completion_tokens = 0

    def tool_call(self, ident: str, search_tokens: int, query: str) -> dict:
        """The search tool call of a first round (only where `search_tool`), searching `query`."""
        raise NotImplementedError(f"{self.name} searches without a tool call")

    def cites_over(self, text_cites: bool) -> bool:
        """Whether the text cites the search's sources; not over numbered markers of its own."""
        return not text_cites

    def cite(self, text: str, sources: list[Source], rng: random.Random) -> tuple[str, list[tuple[int, int, int]]]:
        """The text with markers citing the sources, and where each marker is."""
        return cite_in_text(text, sources, rng, lambda n, s: self.search_marker.format(n=n))

    # --- errors ---

    def error(self, status: int, message: str, kind: str, code: str | None = None) -> ErrorReply:
        return _json_error(status, {"error": {"message": message, "type": kind, "param": None,
                                              "code": code if code is not None else kind}})

    def moderation_error(self, ident: str) -> ErrorReply | None:
        return None

    def billing_error(self, ident: str) -> ErrorReply:
        return self.error(429, "You exceeded your current quota, please check your plan and billing details. For more"
                               " information on this error, read the docs: https://platform.openai.com/docs/guides/"
                               "error-codes/api-errors.", "insufficient_quota")

    def rate_limit_error(self, model: str, limit: int | None, wait_s: float, ident: str) -> ErrorReply:
        shown = limit if limit is not None else 1
        return self.error(429, f"Rate limit reached for {model} in organization org-simulated on requests per min"
                               f" (RPM): Limit {shown}, Used {shown}, Requested 1. Please try again in"
                               f" {go_duration(wait_s)}.", "requests", "rate_limit_exceeded")

    def auth_error(self, ident: str) -> ErrorReply:
        return self.error(401, "Incorrect API key provided. You can find your API key at"
                               " https://platform.openai.com/account/api-keys.", "invalid_request_error",
                          "invalid_api_key")

    def bad_request(self, message: str, ident: str) -> ErrorReply:
        return self.error(400, message, "invalid_request_error", None)

    # --- rate-limit headers ---

    def limit_headers(self, limit: int, remaining: int, reset_s: float) -> list[tuple[str, str]]:
        return [("x-ratelimit-limit-requests", str(limit)),
                ("x-ratelimit-remaining-requests", str(remaining)),
                ("x-ratelimit-reset-requests", go_duration(reset_s))]


def reasoning_for(question: str, brands: tuple[SimBrand, ...], rng: random.Random) -> str:
    """A short chain of thought before the answer."""
    names = [b.name for b in brands[:6]]
    rng.shuffle(names)
    quoted = read_question(question).quote
    if has_cjk(question):
        listed = "、".join(names[:3]) or "几个主流选项"
        return (f"用户问的是「{quoted}」。先列出主流选项，比如{listed}，再从价格、稳定性和口碑几个角度比较，"
                "最后按不同需求给出建议。")
    listed = ", ".join(names[:3]) or "the main options"
    return (f"The user asks: \"{quoted}\". List the main options such as {listed}, compare price, reliability and"
            " reviews, then recommend one per use case.")


def hidden_reasoning_tokens(rng: random.Random, effort: str | None) -> int:
    """OpenAI's reasoning tokens: counted and billed, never shown."""
    scale = {"minimal": 0.1, "low": 0.3, "medium": 0.6, "high": 1.0, "xhigh": 1.5, "max": 2.0}.get(effort or "", 0.6)
    return int(rng.uniform(64, 1024) * scale) + 16


# --- small helpers ------------------------------------------------------------------------

def go_duration(seconds: float) -> str:
    """A Go-style duration, as OpenAI's x-ratelimit-reset-* headers give it: 12ms, 1s, 6m0s."""
    millis = round(seconds * 1000)
    if millis <= 0:
        return "0s"
    if millis < 1000:
        return f"{millis}ms"
    seconds = millis / 1000
    hours, rest = divmod(seconds, 3600)
    minutes, secs = divmod(rest, 60)
    secs_text = f"{secs:.3f}".rstrip("0").rstrip(".")
    text = f"{secs_text}s"
    if hours >= 1:
        return f"{int(hours)}h{int(minutes)}m{text}"
    if minutes >= 1:
        return f"{int(minutes)}m{text}"
    return text


def _thinking_type(request: dict) -> str | None:
    thinking = request.get("thinking")
    return thinking.get("type") if isinstance(thinking, dict) else None


def _uuid(ident: str) -> str:
    h = (ident * 2)[:32]
    return f"{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:32]}"


def _alnum(ident: str, size: int) -> str:
    value = int(ident[:24], 16)
    alphabet = "abcdefghijklmnopqrstuvwxyz0123456789"
    out = []
    for _ in range(size):
        value, digit = divmod(value, 36)
        out.append(alphabet[digit])
    return "".join(out)


def _request_id(ident: str) -> str:
    return "0217" + str(int(ident[:24], 16)).rjust(30, "0")[:30]
