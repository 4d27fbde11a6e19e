"""How simulated Qwen speaks (tests/fixtures/dialects/qwen.json)."""

from __future__ import annotations

from visibility_assets.tools.simulator.dialects.base import SimDialect, _json_error, _uuid


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


DIALECT = Qwen()
