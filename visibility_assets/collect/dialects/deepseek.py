"""DeepSeek: OpenAI-compatible; reasoning in `reasoning_content`, the prompt cache in
`prompt_cache_hit_tokens`, 402 for an exhausted balance, and `insufficient_system_resource`
as a finish reason when the service ran out of capacity mid-answer (retried)."""

from visibility_assets.collect.dialects.base import Dialect, DialectError, openai_usage
from visibility_assets.collect.errors import ErrorClass
from visibility_assets.core.answers import NormalizedAnswer, Usage


class DeepSeek(Dialect):
    name = "deepseek"
    moderation_messages = ("Content Exists Risk",)
    supports_search = False  # its web search tool is documented for other protocols only

    def thinking_params(self, enabled: bool) -> dict:
        return {"thinking": {"type": "enabled" if enabled else "disabled"}}

    def read(self, payload: dict) -> NormalizedAnswer:
        answer = super().read(payload)
        if answer.finish_reason == "insufficient_system_resource":
            raise DialectError("finish_reason insufficient_system_resource: the platform ran out of capacity",
                               ErrorClass.OVERLOADED, "insufficient_system_resource")
        return answer

    def usage(self, payload: dict) -> Usage:
        usage = payload.get("usage") or {}
        base = openai_usage(usage)
        cached = usage.get("prompt_cache_hit_tokens", base.cached_tokens)
        return Usage(base.prompt_tokens, base.completion_tokens, base.total_tokens, cached, base.reasoning_tokens)


DIALECT = DeepSeek()
