"""How simulated Ernie speaks (tests/fixtures/dialects/ernie.json)."""

from __future__ import annotations

from visibility_assets.tools.simulator.dialects.base import SimDialect, _alnum, _json_error, tokens


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


DIALECT = Ernie()
