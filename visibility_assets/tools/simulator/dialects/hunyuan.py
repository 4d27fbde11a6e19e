"""How simulated Hunyuan speaks (tests/fixtures/dialects/hunyuan.json)."""

from __future__ import annotations

import hashlib

from visibility_assets.tools.simulator.dialects.base import SimDialect, _json_error, _uuid


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


DIALECT = Hunyuan()
