"""What each simulated platform says, in its own dialect.

The collector's adapters (collect/dialects/) build a platform's request and read its
response; this module is the other side: how a platform reads the request (is web search or
thinking switched on, is it the second round of Kimi's tool loop) and how it shapes its
answer, its sources, its usage, its moderation, billing and rate-limit errors and its
rate-limit headers. Field names, status codes and error bodies follow the documented shapes
in tests/fixtures/dialects/<dialect>.json and NOTES-<dialect>.md; where a platform documents
nothing (a compat error body, a header) the shape is the plain OpenAI one.

server.py decides what happens to a request (limits, faults, the tool loop); this module
only says how it looks.
"""

from __future__ import annotations

import hashlib
import json
import math
import random
from dataclasses import dataclass, field, replace
from datetime import date, timedelta
from typing import Any
from urllib.parse import quote

from ...config import VisibilityConfig
from ...config.schema import DIALECTS as DIALECT_NAMES
from .answers import SimBrand
from .answers.inputs import has_cjk, read_question

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
class Source:
    url: str
    title: str
    site: str  # the site's display name
    domain: str
    summary: str
    date: str | None  # YYYY-MM-DD


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

    def tool_call(self, ident: str, search_tokens: int) -> dict:
        """The search tool call of a first round (only where `search_tool`)."""
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


class OpenAI(SimDialect):
    reasoning_text = False  # Chat Completions returns reasoning tokens, never the reasoning
    moderation_in_band = True

    def cites_over(self, text_cites):
        return True  # links, not numbers: they never clash with the text's own markers

    def cite(self, text, sources, rng):
        # Search models link their sources inline; each annotation spans its link.
        return cite_in_text(text, sources, rng, lambda n, s: f"[{s.domain}]({s.url})", wrap=("(", ")"))


class DeepSeek(SimDialect):
    name = "deepseek"
    keeps_alive = True
    id_prefix = ""

    def wants_search(self, request, path):
        return False  # no web search documented for Chat Completions

    def wants_thinking(self, request, model):
        return _thinking_type(request) == "enabled" or model == "deepseek-reasoner"

    def decorate(self, body, choice, message, c):
        body["id"] = _uuid(c.ident)
        choice["logprobs"] = None
        body["system_fingerprint"] = "fp_" + c.ident[24:34]

    def usage_details(self, usage, c):
        usage["prompt_tokens_details"] = {"cached_tokens": c.cached_tokens}
        usage["prompt_cache_hit_tokens"] = c.cached_tokens
        usage["prompt_cache_miss_tokens"] = c.prompt_tokens - c.cached_tokens
        if c.reasoning_tokens:
            usage["completion_tokens_details"] = {"reasoning_tokens": c.reasoning_tokens}

    def moderation_error(self, ident):
        return self.error(400, "Content Exists Risk", "invalid_request_error")

    def billing_error(self, ident):
        return self.error(402, "Insufficient Balance", "unknown_error", "invalid_request_error")

    def rate_limit_error(self, model, limit, wait_s, ident):
        return self.error(429, "Rate Limit Reached", "rate_limit_error", "invalid_request_error")

    def auth_error(self, ident):
        return self.error(401, "Authentication Fails (no such user)", "authentication_error", "invalid_request_error")

    def limit_headers(self, limit, remaining, reset_s):
        return []  # none documented


class Qwen(SimDialect):
    name = "qwen"
    returns_sources = False  # compatible mode documents no sources, even when it searched

    def wants_search(self, request, path):
        return request.get("enable_search") is True

    def wants_thinking(self, request, model):
        return request.get("enable_thinking") is True

    def decorate(self, body, choice, message, c):
        body["id"] = "chatcmpl-" + _uuid(c.ident)
        choice["logprobs"] = None
        body["system_fingerprint"] = None

    def usage_details(self, usage, c):
        if c.cached_tokens:
            usage["prompt_tokens_details"] = {"cached_tokens": c.cached_tokens}
        if c.reasoning_tokens:
            usage["completion_tokens_details"] = {"reasoning_tokens": c.reasoning_tokens}

    def _error(self, status, code, message, ident):
        request_id = _uuid(ident)
        return _json_error(status, {"error": {"code": code, "param": None, "message": message, "type": code},
                                    "id": "chatcmpl-" + request_id, "request_id": request_id})

    def moderation_error(self, ident):
        return self._error(400, "data_inspection_failed", "Input data may contain inappropriate content. For details,"
                           " see: https://help.aliyun.com/zh/model-studio/error-code#inappropriate-content", ident)

    def billing_error(self, ident):
        return self._error(400, "Arrearage", "Access denied, please make sure your account is in good standing.",
                           ident)

    def rate_limit_error(self, model, limit, wait_s, ident):
        return self._error(429, "Throttling.RateQuota", "Requests rate limit exceeded, please try again later.", ident)

    def auth_error(self, ident):
        return self._error(401, "invalid_api_key", "Incorrect API key provided.", ident)

    def bad_request(self, message, ident):
        return self._error(400, "invalid_parameter_error", message, ident)

    def limit_headers(self, limit, remaining, reset_s):
        return []


class Ernie(SimDialect):
    name = "ernie"
    search_marker = "^[{n}]^"
    moderation_in_band = True
    id_prefix = "as-"

    def wants_search(self, request, path):
        search = request.get("web_search")
        return isinstance(search, dict) and search.get("enable") is True

    def wants_thinking(self, request, model):
        return request.get("enable_thinking") is True or model.startswith("ernie-x1")

    def decorate(self, body, choice, message, c):
        body["id"] = "as-" + _alnum(c.ident, 10)
        if c.finish_reason == "stop":
            choice["finish_reason"] = "normal"
        choice["flag"] = 0
        if c.moderated:
            choice["flag"], choice["ban_round"] = 2, -1  # 2: the chat is banned, -1: this turn
        if c.sources:
            body["search_results"] = [{"index": n, "url": s.url, "title": s.title}
                                      for n, s in enumerate(c.sources, start=1)]

    def usage_details(self, usage, c):
        pass  # v2 usage: prompt, completion and total only (no cache or reasoning counts)

    def moderated(self, c):
        super().moderated(c)
        c.text = "抱歉，这个问题我无法回答。"  # the platform answers with a refusal and flags it
        c.completion_tokens = tokens(c.text)

    def _error(self, status, code, message, kind, ident):
        return _json_error(status, {"error": {"code": code, "message": message, "type": kind},
                                    "id": "as-" + _alnum(ident, 10)})

    def billing_error(self, ident):
        # No v2 arrears code is documented: 402 with the v1 wording.
        return self._error(402, "account_arrears", "未开通所调用服务的付费权限，或者账户已欠费", "billing_error", ident)

    def rate_limit_error(self, model, limit, wait_s, ident):
        return self._error(429, "rpm_rate_limit_exceeded", "Rate limit reached for RPM", "rate_limit_exceeded", ident)

    def auth_error(self, ident):
        return self._error(401, "access_denied", "Access denied", "access_denied", ident)

    def bad_request(self, message, ident):
        return self._error(400, "invalid_argument", message, "invalid_request_error", ident)

    def limit_headers(self, limit, remaining, reset_s):
        return [("X-Ratelimit-Limit-Requests", str(limit)), ("X-Ratelimit-Remaining-Requests", str(remaining))]


class Hunyuan(SimDialect):
    name = "hunyuan"
    moderation_in_band = True

    def wants_search(self, request, path):
        return request.get("enable_enhancement") is True

    def wants_thinking(self, request, model):
        return "-t1" in model  # Hunyuan-T1 models always think; the compat API has no switch

    def decorate(self, body, choice, message, c):
        body["id"] = _uuid(c.ident)
        if c.sources:
            body["search_info"] = {"search_results": [
                {"index": n, "title": s.title, "url": s.url, "text": s.site, "icon": f"https://{s.domain}/favicon.ico"}
                for n, s in enumerate(c.sources, start=1)]}

    def usage_details(self, usage, c):
        pass  # none documented beyond prompt, completion and total

    def moderated(self, c):
        super().moderated(c)
        c.finish_reason, c.text = "sensitive", ""

    def error(self, status, message, kind, code=None):
        return _json_error(status, {"error": {"id": hashlib.sha256(message.encode()).hexdigest()[:32],
                                              "message": message, "type": kind, "param": None,
                                              "code": code if code is not None else kind}})

    def billing_error(self, ident):
        return self.error(402, "账户已欠费，请充值后重试。", "billing_error", "ResourceUnavailable.InArrears")

    def rate_limit_error(self, model, limit, wait_s, ident):
        return self.error(429, "请求限流，请稍后重试。", "rate_limit_error", "rate_limit_exceeded")

    def bad_request(self, message, ident):
        return self.error(400, message, "invalid_request_error", "1001")

    def limit_headers(self, limit, remaining, reset_s):
        return []


class Doubao(SimDialect):
    name = "doubao"
    id_prefix = "0217"

    def wants_search(self, request, path):
        return path.endswith(BOT_PATH_SUFFIX)  # web search is the bot's plugin

    def wants_thinking(self, request, model):
        return _thinking_type(request) == "enabled"

    def decorate(self, body, choice, message, c):
        body["id"] = "0217" + str(int(c.ident[:30], 16))[:47].rjust(47, "0")
        choice["logprobs"] = None
        if c.searched:  # a bot's answer: its sources and its usage per model and per plugin action
            body["references"] = [
                {"url": s.url, "logo_url": f"https://{s.domain}/favicon.ico", "site_name": s.site, "title": s.title,
                 "summary": s.summary, **({"publish_time": f"{s.date} 08:00:00"} if s.date else {})}
                for s in c.sources]
            body["bot_usage"] = {
                "model_usage": [{"name": BOT_BASE_MODEL, "prompt_tokens": c.prompt_tokens,
                                 "completion_tokens": c.completion_tokens, "total_tokens": c.total_tokens}],
                "action_usage": [{"name": "content_plugin", "search_count": 1}]}
        else:
            body["service_tier"] = "default"

    def usage_details(self, usage, c):
        usage["prompt_tokens_details"] = {"cached_tokens": c.cached_tokens}
        if c.reasoning_tokens:
            usage["completion_tokens_details"] = {"reasoning_tokens": c.reasoning_tokens}

    def _error(self, status, code, message, kind):
        return _json_error(status, {"error": {"code": code, "message": message, "param": "", "type": kind}})

    def moderation_error(self, ident):
        return self._error(400, "SensitiveContentDetected",
                           "The request failed because the input text may contain sensitive information.",
                           "BadRequest")

    def billing_error(self, ident):
        return self._error(403, "AccountOverdueError", "The request failed because your account has an overdue"
                           f" balance. Request ID: {_request_id(ident)}", "Forbidden")

    def rate_limit_error(self, model, limit, wait_s, ident):
        return self._error(429, "RateLimitExceeded.EndpointRPMExceeded", "The Requests Per Minute (RPM) limit of the"
                           " associated endpoint for your account has been exceeded. Request ID:"
                           f" {_request_id(ident)}", "TooManyRequests")

    def auth_error(self, ident):
        return self._error(401, "AuthenticationError", "The API key or AK/SK in the request is missing or invalid."
                           f" Request ID: {_request_id(ident)}", "Unauthorized")

    def bad_request(self, message, ident):
        return self._error(400, "InvalidParameter", f"{message} Request ID: {_request_id(ident)}", "BadRequest")

    def limit_headers(self, limit, remaining, reset_s):
        return []


BOT_BASE_MODEL = "doubao-seed-1-6"


class Kimi(SimDialect):
    name = "kimi"
    returns_sources = False  # sources only as text; none structured
    search_tool = True
    id_prefix = "cmpl-"

    def read(self, request, path):
        ask = super().read(request, path)
        for message in request["messages"]:
            if not isinstance(message, dict):
                continue
            if message.get("role") == "tool":
                ask.tool_results.append(message)
            elif message.get("role") == "assistant":
                ask.tool_calls_echoed.extend(c for c in message.get("tool_calls") or [] if isinstance(c, dict))
        return ask

    def wants_search(self, request, path):
        return any(isinstance(tool, dict) and tool.get("type") == "builtin_function"
                   and (tool.get("function") or {}).get("name") == KIMI_WEB_SEARCH
                   for tool in request.get("tools") or [])

    def wants_thinking(self, request, model):
        return _thinking_type(request) == "enabled" or "thinking" in model

    def decorate(self, body, choice, message, c):
        if c.text is None:
            message["content"] = ""

    def usage_details(self, usage, c):
        if c.cached_tokens:
            usage["cached_tokens"] = c.cached_tokens  # top level, for models with automatic caching

    def error(self, status, message, kind, code=None):
        return _json_error(status, {"error": {"type": kind, "message": message}})  # no code field

    def moderation_error(self, ident):
        return self.error(400, "The request was rejected because it was considered high risk", "content_filter")

    def billing_error(self, ident):
        return self.error(429, "You exceeded your current token quota: <org-simulated> 0, please check your account"
                               " balance", "exceeded_current_quota_error")

    def rate_limit_error(self, model, limit, wait_s, ident):
        return self.error(429, f"Your account org-simulated<ak-simulated> request reached organization max RPM:"
                               f" {limit if limit is not None else 1}, please try again after"
                               f" {max(1, math.ceil(wait_s))} seconds", "rate_limit_reached_error")

    def auth_error(self, ident):
        return self.error(401, "Invalid Authentication", "invalid_authentication_error")

    def limit_headers(self, limit, remaining, reset_s):
        return [("X-RateLimit-Limit", str(limit)), ("X-RateLimit-Remaining", str(remaining)),
                ("X-RateLimit-Reset", str(max(0, math.ceil(reset_s))))]

    def tool_call(self, ident: str, search_tokens: int) -> dict:
        """The $web_search call of the first round; its arguments must come back verbatim."""
        arguments = json.dumps({"search_result": {"search_id": ident[:8]}, "usage": {"total_tokens": search_tokens}})
        return {"index": 0, "id": f"t-web_search-{int(ident[8:18], 16) % 10 ** 12:012d}", "type": "builtin_function",
                "function": {"name": KIMI_WEB_SEARCH, "arguments": arguments}}


class Perplexity(SimDialect):
    name = "perplexity"
    reasoning_text = False
    reasoning_inline = True
    moderation_in_band = True

    def wants_search(self, request, path):
        return request.get("disable_search") is not True  # Sonar searches unless told not to

    def wants_thinking(self, request, model):
        return "reasoning" in model  # sonar-reasoning-pro: thinking is the model

    def payload(self, c):
        if c.reasoning and c.text:
            c = replace(c, text=f"<think>\n{c.reasoning}\n</think>\n\n{c.text}")
        return super().payload(c)

    def decorate(self, body, choice, message, c):
        body["id"] = _uuid(c.ident)
        if message["content"] is None:
            message["content"] = ""
        choice["delta"] = {"role": "assistant", "content": ""}
        if c.searched:
            body["citations"] = [s.url for s in c.sources]
            body["search_results"] = [{"title": s.title, "url": s.url, "date": s.date, "last_updated": s.date,
                                       "snippet": s.summary, "source": "web"} for s in c.sources]

    def usage_details(self, usage, c):
        if c.searched:
            usage["search_context_size"] = "low"
            usage["num_search_queries"] = 1
        if c.reasoning_tokens:
            usage["reasoning_tokens"] = c.reasoning_tokens

    def error(self, status, message, kind, code=None):
        return _json_error(status, {"error": {"message": message, "type": kind, "code": status}})

    def billing_error(self, ident):
        return self.error(402, "Insufficient credits: add credits to your API account to continue.",
                          "insufficient_credits")

    def rate_limit_error(self, model, limit, wait_s, ident):
        return self.error(429, "Rate limit exceeded, please slow down.", "rate_limit_exceeded")

    def auth_error(self, ident):
        html = ("<html>\n<head><title>401 Authorization Required</title></head>\n<body>\n<center><h1>401"
                " Authorization Required</h1></center>\n<hr><center>openresty/1.27.4</center>\n</body>\n</html>\n")
        return ErrorReply(401, html.encode(), "text/html")

    def limit_headers(self, limit, remaining, reset_s):
        return []


SIM_DIALECTS: dict[str, SimDialect] = {d.name: d for d in (OpenAI(), DeepSeek(), Qwen(), Ernie(), Hunyuan(), Doubao(),
                                                          Kimi(), Perplexity())}


# --- sources ------------------------------------------------------------------------------

@dataclass(frozen=True)
class _Site:
    name: str
    domain: str
    url: str  # {n:9} digits, {a:8} letters and digits, {slug}, {topic}
    title: str  # {topic}, {year}
    language: str


THIRD_PARTY_SITES = (
    _Site("知乎", "zhihu.com", "https://www.zhihu.com/question/{n:9}", "{topic}哪个好？有什么推荐？ - 知乎", "zh"),
    _Site("知乎专栏", "zhihu.com", "https://zhuanlan.zhihu.com/p/{n:9}", "{year}年{topic}横评：怎么选不踩坑", "zh"),
    _Site("百度百科", "baike.baidu.com", "https://baike.baidu.com/item/{topic_q}", "{topic}_百度百科", "zh"),
    _Site("36氪", "36kr.com", "https://36kr.com/p/{n:13}", "{year}年{topic}市场观察-36氪", "zh"),
    _Site("什么值得买", "smzdm.com", "https://post.smzdm.com/p/{a:8}/", "{topic}选购指南 | 什么值得买", "zh"),
    _Site("少数派", "sspai.com", "https://sspai.com/post/{n:5}", "我用过的几款{topic}，聊聊真实体验 - 少数派", "zh"),
    _Site("CSDN博客", "csdn.net", "https://blog.csdn.net/{a:8}/article/details/{n:9}", "{topic}对比与选型总结_CSDN博客",
          "zh"),
    _Site("Reddit", "reddit.com", "https://www.reddit.com/r/{sub}/comments/{a:6}/{slug}/",
          "Which {topic} do you actually use? : r/{sub}", "en"),
    _Site("Wikipedia", "en.wikipedia.org", "https://en.wikipedia.org/wiki/{wiki}", "{Topic} - Wikipedia", "en"),
    _Site("TechRadar", "techradar.com", "https://www.techradar.com/best/{slug}", "The best {topics} of {year} | TechRadar",
          "en"),
    _Site("G2", "g2.com", "https://www.g2.com/categories/{slug}", "Best {Topics} in {year}: Compare Reviews | G2", "en"),
)
OWN_SITE_SHARE = 0.35  # answers whose sources include a tracked brand's own site


def draw_sources(rng: random.Random, question: str, brands: tuple[SimBrand, ...], day: str | None) -> list[Source]:
    """2-4 sources a search found: mostly third-party sites, sometimes a tracked brand's own."""
    zh = has_cjk(question)
    category = read_question(question).category
    year = day[:4] if day and day[:4].isdigit() else "2025"
    count = rng.randint(2, 4)
    sources: list[Source] = []
    owners = [b for b in brands if b.domains]
    if owners and rng.random() < OWN_SITE_SHARE:
        brand = owners[int(rng.random() * len(owners))]
        domain = brand.domains[int(rng.random() * len(brand.domains))]
        page = ("", "products/", "pricing/", "about/")[int(rng.random() * 4)]
        title = f"{brand.name}官网" if zh else f"{brand.name} - Official Site"
        host = domain if domain.count(".") >= 2 else "www." + domain
        sources.append(Source(f"https://{host}/{page}", title, brand.name, domain,
                              f"{brand.name}的产品与价格介绍。" if zh else f"{brand.name} products and pricing.",
                              _date(rng, day)))
    used: set[str] = set()
    while len(sources) < count:
        same_language = rng.random() < 0.8
        language = ("zh" if zh else "en") if same_language else ("en" if zh else "zh")
        candidates = [s for s in THIRD_PARTY_SITES if s.language == language and s.url not in used]
        if not candidates:
            candidates = [s for s in THIRD_PARTY_SITES if s.url not in used]
        site = candidates[int(rng.random() * len(candidates))]
        used.add(site.url)
        topic = category.zh if language == "zh" else category.en
        topics = category.zh if language == "zh" else category.en_plural
        fields = {"topic": topic, "Topic": topic[:1].upper() + topic[1:], "topics": topics,
                  "Topics": topics[:1].upper() + topics[1:], "year": year, "slug": category.slug,
                  "topic_q": quote(topic), "wiki": quote(topic[:1].upper() + topic[1:].replace(" ", "_")),
                  "sub": ("BuyItForLife", "sysadmin", "technology", "AskReddit")[int(rng.random() * 4)]}
        title = site.title.format(**fields)
        summary = (f"{title}：从价格、体验和口碑几个方面做了对比。" if language == "zh"
                   else f"{title}: a comparison of price, experience and reviews.")
        sources.append(Source(_fill_url(rng, site.url, fields), title, site.name, site.domain, summary,
                              _date(rng, day)))
    if len(sources) > 2 and rng.random() < 0.5:
        rng.shuffle(sources)
    return sources


def _fill_url(rng: random.Random, template: str, fields: dict) -> str:
    out, i = [], 0
    while i < len(template):
        if template[i] != "{":
            out.append(template[i])
            i += 1
            continue
        end = template.index("}", i)
        name, _, size = template[i + 1:end].partition(":")
        if name == "n":
            n = int(size)
            out.append(str(int(rng.random() * 9 * 10 ** (n - 1)) + 10 ** (n - 1)))
        elif name == "a":
            out.append("".join("abcdefghijklmnopqrstuvwxyz0123456789"[int(rng.random() * 36)]
                               for _ in range(int(size))))
        else:
            out.append(fields[name])
        i = end + 1
    return "".join(out)


def _date(rng: random.Random, day: str | None) -> str | None:
    if rng.random() < 0.15:
        return None
    try:
        base = date.fromisoformat(day) if day else date(2025, 6, 1)
    except ValueError:
        base = date(2025, 6, 1)
    return (base - timedelta(days=int(rng.random() * 700))).isoformat()


def cite_in_text(text: str, sources: list[Source], rng: random.Random, marker, wrap: tuple[str, str] = ("", "")
                 ) -> tuple[str, list[tuple[int, int, int]]]:
    """Append a marker for each source to a line of prose (a source may be cited twice); the
    text and each marker's (source, start, end). Sources no line can carry go on a last line."""
    if not sources:
        return text, []
    lines = text.split("\n")
    prose, in_think = [], False
    for number, line in enumerate(lines):
        stripped = line.strip()
        if stripped.startswith("<think>"):
            in_think = True
        if not in_think and stripped and stripped[0] not in "|#`>" and not stripped.startswith("---"):
            prose.append(number)
        if "</think>" in stripped:
            in_think = False
    chosen: dict[int, list[int]] = {}
    for source in range(len(sources)):
        if prose:
            chosen.setdefault(prose[int(rng.random() * len(prose))], []).append(source)
    if prose and rng.random() < 0.4:
        chosen.setdefault(prose[int(rng.random() * len(prose))], []).append(int(rng.random() * len(sources)))
    cited = {s for group in chosen.values() for s in group}
    tail = [s for s in range(len(sources)) if s not in cited]
    if tail:
        if text.strip():
            lines.append("")
        chosen.setdefault(len(lines) - 1, []).extend(tail)
    spans: list[tuple[int, int, int]] = []
    out: list[str] = []
    offset = 0
    for number, line in enumerate(lines):
        for source in sorted(set(chosen.get(number, ()))):
            mark = marker(source + 1, sources[source])
            lead = (" " + wrap[0] if line else wrap[0]) if wrap[0] else ""
            start = offset + len(line) + len(lead)
            spans.append((source, start, start + len(mark)))
            line = line + lead + mark + wrap[1]
        out.append(line)
        offset += len(line) + 1
    return "\n".join(out), spans


# --- reasoning ----------------------------------------------------------------------------

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
