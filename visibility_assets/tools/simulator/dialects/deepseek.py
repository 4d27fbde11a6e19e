"""How simulated DeepSeek speaks (tests/fixtures/dialects/deepseek.json)."""

from __future__ import annotations

import hashlib

from visibility_assets.tools.simulator.dialects.base import SimDialect, _thinking_type, _uuid


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
        # A deployment's fingerprint: the same for every answer of one model (it changes with the model).
        body["system_fingerprint"] = "fp_" + hashlib.sha256(c.model.encode()).hexdigest()[:10]

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


DIALECT = DeepSeek()
