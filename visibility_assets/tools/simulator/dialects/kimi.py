"""How simulated Kimi speaks (tests/fixtures/dialects/kimi.json)."""

from __future__ import annotations

import json
import math

from visibility_assets.tools.simulator.dialects.base import KIMI_WEB_SEARCH, SimDialect, _json_error, _thinking_type


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

    def tool_call(self, ident: str, search_tokens: int, query: str) -> dict:
        """The $web_search call of the first round; its arguments must come back verbatim. Kimi
        documents the search's id and tokens in them; the simulator adds the query it searched,
        so that reading a query where a platform gives one is exercised end to end."""
        arguments = json.dumps({"search_result": {"search_id": ident[:8]}, "usage": {"total_tokens": search_tokens},
                                "query": query}, ensure_ascii=False)
        return {"index": 0, "id": f"t-web_search-{int(ident[8:18], 16) % 10 ** 12:012d}", "type": "builtin_function",
                "function": {"name": KIMI_WEB_SEARCH, "arguments": arguments}}


DIALECT = Kimi()
