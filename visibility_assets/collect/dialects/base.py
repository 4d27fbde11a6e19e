"""The OpenAI-compatible Chat Completions dialect, which every other dialect adapts.

A dialect turns a planned question into the platform's request body, reads its response
into a NormalizedAnswer, and classifies its error bodies. The subclasses change only what
their platform does differently (how search and thinking are switched on, where sources,
reasoning and usage come back, which error codes mean moderation, billing or overload).
"""

from __future__ import annotations

import copy
import json
import re
from dataclasses import replace
from typing import Any

from visibility_assets.collect.errors import ErrorClass, classify_status
from visibility_assets.config import Platform
from visibility_assets.config.schema import Location
from visibility_assets.core.answers import ANSWERED, MODERATED, TRUNCATED, Citation, NormalizedAnswer, Usage

INLINE_THINK = re.compile(r"^\s*<think>(.*?)</think>\s*", re.S)
MODERATION_FINISH = frozenset({"content_filter", "sensitive"})


class DialectError(Exception):
    """A 200 response that is not a usable completion in this dialect (malformed unless it says)."""

    def __init__(self, message: str, error_class: ErrorClass = ErrorClass.MALFORMED, code: str | None = None):
        super().__init__(message)
        self.error_class, self.code = error_class, code


class UnsupportedSetting(Exception):
    """A platform setting its dialect cannot honour: refused before anything is sent."""


class Dialect:
    name = "openai"
    path = "/chat/completions"
    protocols = frozenset({"compatible"})  # the response shapes this adapter reads
    # Error codes (the body's code or type) that mean something other than their status says.
    moderation_codes: frozenset[str] = frozenset()
    billing_codes: frozenset[str] = frozenset()
    overload_codes: frozenset[str] = frozenset()
    # Words of an error message that mean moderation where the code does not say (DeepSeek).
    moderation_messages: tuple[str, ...] = ()
    max_tool_rounds = 0
    supports_search = True  # False: the platform documents no web search for this API

    def check(self, platform: Platform) -> None:
        if platform.web_search and not self.supports_search:
            raise UnsupportedSetting(f"platform {platform.name!r}: web_search is not available in the {self.name}"
                                     " dialect's Chat Completions API; set web_search: false")

    # --- the request ------------------------------------------------------------------------

    def url(self, platform: Platform) -> str:
        return platform.base_url.rstrip("/") + self.path_for(platform)

    def path_for(self, platform: Platform) -> str:
        return self.path

    def body(self, platform: Platform, prompt: str, location: Location | None = None) -> dict:
        """location: a question variant's user location, sent where the platform's search takes one."""
        body: dict[str, Any] = {"model": self.model_for(platform), "stream": False,
                                "messages": [{"role": "user", "content": prompt}]}
        if platform.web_search:
            merge(body, self.search_params(platform))
            if location is not None:
                merge(body, self.location_params(location))
        if platform.thinking is not None:
            merge(body, self.thinking_params(platform.thinking == "enabled"))
        return merge(body, copy.deepcopy(platform.extra_body))

    def model_for(self, platform: Platform) -> str:
        return platform.model

    def search_params(self, platform: Platform) -> dict:
        return {}

    def thinking_params(self, enabled: bool) -> dict:
        return {}

    def location_params(self, location: Location) -> dict:
        """The user location in the platform's own search parameter; {}: its API documents none."""
        return {}

    def next_round(self, body: dict, payload: dict) -> dict | None:
        """The next request of a tool loop, or None when the answer is complete."""
        return None

    def searches(self, payload: dict) -> int:
        """Searches a tool round asked the platform to run (counted when the usage does not say)."""
        return 0

    def queries(self, payload: dict) -> list[str]:
        """The queries the platform's search ran, where its response shows them."""
        return []

    # --- the response -----------------------------------------------------------------------

    def read(self, payload: dict) -> NormalizedAnswer:
        try:
            choice = payload["choices"][0]
            message = choice["message"]
        except (KeyError, IndexError, TypeError) as exc:
            raise DialectError(f"no choices[0].message: {exc!r}") from None
        content = message.get("content")
        if content is None:
            # Null content is normal for a moderated answer or a tool call, not for a finished one.
            if self.outcome(choice.get("finish_reason"), payload) == ANSWERED and not message.get("tool_calls"):
                raise DialectError("message content is null in a finished answer")
            content = ""
        if not isinstance(content, str):
            raise DialectError("message content is not a string")
        text, inline_reasoning = split_inline_think(content)
        reasoning = message.get("reasoning_content") or inline_reasoning
        finish = choice.get("finish_reason")
        citations = self.citations(payload, message)
        usage, searches = self.usage(payload), self.searches(payload)
        if searches and usage.search_count is None:
            usage = replace(usage, search_count=searches)
        return NormalizedAnswer(
            outcome=self.outcome(finish, payload), text=text, reasoning_text=reasoning or None,
            finish_reason=finish, model=payload.get("model"), system_fingerprint=_text_or_none(payload.get("system_fingerprint")),
            citations=citations,
            search_used=bool(searches) or self.search_used(payload, citations), usage=usage,
            search_queries=self.queries(payload))

    def read_rounds(self, payloads: list[dict]) -> NormalizedAnswer:
        """The answer of a tool loop: the last round's answer, with every round's usage and
        searches added up (each round is billed)."""
        rounds = [self.read(payload) for payload in payloads]
        answer = rounds[-1]
        for before in rounds[:-1]:
            answer.usage = before.usage + answer.usage
            answer.search_used = answer.search_used or before.search_used
        answer.search_queries = [query for each in rounds for query in each.search_queries]
        answer.tool_rounds = len(payloads) - 1
        return answer

    def outcome(self, finish_reason: str | None, payload: dict) -> str:
        if finish_reason in MODERATION_FINISH:
            return MODERATED
        if finish_reason == "length":
            return TRUNCATED
        return ANSWERED

    def citations(self, payload: dict, message: dict) -> list[Citation]:
        return []

    def search_used(self, payload: dict, citations: list[Citation]) -> bool:
        return bool(citations)

    def usage(self, payload: dict) -> Usage:
        return openai_usage(payload.get("usage") or {})

    # --- errors -----------------------------------------------------------------------------

    def classify_error(self, status: int, body: str) -> tuple[ErrorClass, str | None]:
        """The class of a failed response and the platform's error code, if it gave one."""
        codes = error_codes(body)
        code = codes[0] if codes else None
        if self.moderation_codes.intersection(codes) or any(words in body for words in self.moderation_messages):
            return ErrorClass.MODERATED, code
        if self.billing_codes.intersection(codes):
            return ErrorClass.BILLING, code
        if self.overload_codes.intersection(codes):
            return ErrorClass.OVERLOADED, code
        return classify_status(status, body), code


def merge(target: dict, extra: dict) -> dict:
    """Deep-merge `extra` into `target` (nested objects merge; anything else replaces)."""
    for key, value in extra.items():
        if isinstance(value, dict) and isinstance(target.get(key), dict):
            merge(target[key], value)
        else:
            target[key] = value
    return target


def split_inline_think(content: str) -> tuple[str, str | None]:
    """An answer that opens with <think>...</think> (reasoning inline): (answer, reasoning)."""
    match = INLINE_THINK.match(content)
    if not match:
        return content, None
    return content[match.end():], match.group(1).strip()


def openai_usage(usage: dict) -> Usage:
    prompt_details = usage.get("prompt_tokens_details") or {}
    completion_details = usage.get("completion_tokens_details") or {}
    return Usage(
        prompt_tokens=usage.get("prompt_tokens"), completion_tokens=usage.get("completion_tokens"),
        total_tokens=usage.get("total_tokens"),
        cached_tokens=prompt_details.get("cached_tokens", usage.get("cached_tokens")),  # Kimi: top level
        reasoning_tokens=completion_details.get("reasoning_tokens"))


def error_codes(body: str) -> list[str]:
    """The codes an error body gives, most specific first: {"error": {"code", "type"}}, or a
    top-level {"code"} (DashScope's native protocol)."""
    try:
        data = json.loads(body)
    except (ValueError, TypeError):
        return []
    if not isinstance(data, dict):
        return []
    error = data.get("error")
    if isinstance(error, dict):
        found = [error.get("code"), error.get("type")]
    else:
        found = [data.get("code"), error if isinstance(error, str) else None]
    return [str(code) for code in found if code not in (None, "")]


def _text_or_none(value) -> str | None:
    return value if isinstance(value, str) and value else None
