"""How simulated Doubao speaks (tests/fixtures/dialects/doubao.json)."""

from __future__ import annotations

from visibility_assets.tools.simulator.dialects.base import (
    BOT_PATH_SUFFIX,
    SimDialect,
    _json_error,
    _request_id,
    _thinking_type,
)


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


DIALECT = Doubao()
