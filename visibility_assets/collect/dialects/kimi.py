"""Kimi (Moonshot): web search is the `$web_search` builtin function. The platform stops with
`finish_reason: tool_calls`; the client sends each call's arguments back verbatim as a `tool`
message and asks again, until the answer stops. The client caps the rounds and adds up
their usage."""

import copy

from visibility_assets.collect.dialects.base import Dialect
from visibility_assets.config import Platform

WEB_SEARCH = "$web_search"


class Kimi(Dialect):
    name = "kimi"
    moderation_codes = frozenset({"content_filter"})
    billing_codes = frozenset({"exceeded_current_quota_error"})
    overload_codes = frozenset({"engine_overloaded_error"})
    max_tool_rounds = 4

    def search_params(self, platform: Platform) -> dict:
        # $web_search does not work while the model thinks: search switches thinking off.
        return {"tools": [{"type": "builtin_function", "function": {"name": WEB_SEARCH}}],
                "thinking": {"type": "disabled"}}

    def thinking_params(self, enabled: bool) -> dict:
        return {"thinking": {"type": "enabled" if enabled else "disabled"}}

    def next_round(self, body: dict, payload: dict) -> dict | None:
        choice = (payload.get("choices") or [{}])[0]
        message = choice.get("message") or {}
        calls = message.get("tool_calls") or []
        if choice.get("finish_reason") != "tool_calls" or not calls:
            return None
        following = copy.deepcopy(body)
        following["messages"].append(message)  # the assistant's tool calls, as the platform sent them
        for call in calls:
            function = call.get("function") or {}
            # The arguments go back byte for byte: the platform reads its search id from them.
            following["messages"].append({"role": "tool", "tool_call_id": call.get("id"),
                                          "name": function.get("name"), "content": function.get("arguments")})
        return following

    def searches(self, payload: dict) -> int:
        message = ((payload.get("choices") or [{}])[0]).get("message") or {}
        return sum(1 for call in message.get("tool_calls") or []
                   if (call.get("function") or {}).get("name") == WEB_SEARCH)


DIALECT = Kimi()
