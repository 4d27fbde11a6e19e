"""Doubao (Volcengine Ark): web search only through an application (bot) on
`/bots/chat/completions` with a `bot-` model id; sources in `references`, usage in `bot_usage`;
thinking with `thinking: {type}`."""

from visibility_assets.collect.dialects.base import Dialect, openai_usage
from visibility_assets.config import Platform
from visibility_assets.core.answers import Citation, Usage


class Doubao(Dialect):
    name = "doubao"
    moderation_codes = frozenset({"SensitiveContentDetected", "InputTextSensitiveContentDetected",
                                  "OutputTextSensitiveContentDetected", "InputImageSensitiveContentDetected"})
    billing_codes = frozenset({"AccountOverdueError", "QuotaExceeded"})
    overload_codes = frozenset({"ServerOverloaded"})

    def path_for(self, platform: Platform) -> str:
        return "/bots/chat/completions" if platform.web_search else self.path

    def search_params(self, platform: Platform) -> dict:
        # The model is the bot's id (bot-...), whose web-search plugin is set up in the Ark console;
        # bot_usage (with the search count) comes back only when usage is asked for.
        return {"stream_options": {"include_usage": True}}

    def thinking_params(self, enabled: bool) -> dict:
        return {"thinking": {"type": "enabled" if enabled else "disabled"}}

    def citations(self, payload: dict, message: dict) -> list[Citation]:
        return [Citation(ref["url"], ref.get("title"), ref.get("site_name"), position)
                for position, ref in enumerate(payload.get("references") or [], start=1)
                if isinstance(ref, dict) and ref.get("url")]

    def usage(self, payload: dict) -> Usage:
        bot = payload.get("bot_usage")
        if not bot:
            return openai_usage(payload.get("usage") or {})
        # A bot's usage: one entry per model it called, one per plugin action (the web search).
        total = Usage()
        for model in bot.get("model_usage") or []:
            total = total + openai_usage(model)
        counts = [action.get("search_count") for action in bot.get("action_usage") or []]
        searches = sum(c for c in counts if c is not None) if any(c is not None for c in counts) else None
        return Usage(total.prompt_tokens, total.completion_tokens, total.total_tokens, total.cached_tokens,
                     total.reasoning_tokens, searches)


DIALECT = Doubao()
