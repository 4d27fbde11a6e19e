"""Kimi (Moonshot): web search is the `$web_search` builtin function. The platform stops with
`finish_reason: tool_calls`; the client sends each call's arguments back verbatim as a `tool`
message and asks again, until the answer stops. The client caps the rounds and adds up
their usage."""

import copy
import json

from visibility_assets.collect.dialects.base import Dialect
from visibility_assets.config import Platform

WEB_SEARCH = "$web_search"
MAX_QUERY_CHARS = 500


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
        return len(_search_calls(payload))

    def queries(self, payload: dict) -> list[str]:
        """The query each $web_search call carries in its arguments. Kimi documents only the
        search's id and tokens there (`search_result.search_id`, `usage.total_tokens`), so a
        query is read where the arguments hold one (`query` or `queries`, at the top or in
        `search_result`) and nothing is made up where they do not."""
        found: list[str] = []
        for call in _search_calls(payload):
            try:
                arguments = json.loads((call.get("function") or {}).get("arguments") or "")
            except (TypeError, ValueError):
                continue
            if not isinstance(arguments, dict):
                continue
            for holder in (arguments, arguments.get("search_result")):
                if isinstance(holder, dict):
                    found.extend(_strings(holder.get("query")) + _strings(holder.get("queries")))
        return found


def _search_calls(payload: dict) -> list[dict]:
    choices = payload.get("choices") or [{}]
    message = (choices[0] if isinstance(choices[0], dict) else {}).get("message") or {}
    return [call for call in message.get("tool_calls") or []
            if isinstance(call, dict) and (call.get("function") or {}).get("name") == WEB_SEARCH]


def _strings(value) -> list[str]:
    values = value if isinstance(value, list) else [value]
    return [v.strip()[:MAX_QUERY_CHARS] for v in values if isinstance(v, str) and v.strip()]


DIALECT = Kimi()
