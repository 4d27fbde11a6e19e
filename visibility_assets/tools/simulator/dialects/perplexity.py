"""How simulated Perplexity speaks (tests/fixtures/dialects/perplexity.json)."""

from __future__ import annotations

from dataclasses import replace

from visibility_assets.tools.simulator.dialects.base import ErrorReply, SimDialect, _json_error, _uuid


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


DIALECT = Perplexity()
