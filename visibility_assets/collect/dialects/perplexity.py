"""Perplexity (Sonar): always searches; sources as top-level `citations` (URLs) and
`search_results` (title, url, date); reasoning models think inline in <think>."""

from visibility_assets.collect.dialects.base import Dialect, openai_usage
from visibility_assets.config import Platform
from visibility_assets.config.schema import Location
from visibility_assets.core.answers import Citation, Usage


class Perplexity(Dialect):
    name = "perplexity"

    def body(self, platform: Platform, prompt: str, location: Location | None = None) -> dict:
        body = super().body(platform, prompt, location)
        if not platform.web_search:
            body.setdefault("disable_search", True)  # Sonar searches on every request unless told not to
        return body

    def search_params(self, platform: Platform) -> dict:
        return {"web_search_options": {"search_context_size": "low"}}

    def location_params(self, location: Location) -> dict:
        """`web_search_options.user_location`: the country code, and the coordinates when given."""
        place = {"country": location.country}
        if location.latitude is not None and location.longitude is not None:
            place |= {"latitude": location.latitude, "longitude": location.longitude}
        return {"web_search_options": {"user_location": place}}

    def citations(self, payload: dict, message: dict) -> list[Citation]:
        results = {r.get("url"): r for r in payload.get("search_results") or [] if isinstance(r, dict)}
        urls = list(payload.get("citations") or []) or list(results)
        return [Citation(url, (results.get(url) or {}).get("title"), index=position)
                for position, url in enumerate(urls, start=1) if isinstance(url, str) and url]

    def search_used(self, payload: dict, citations: list[Citation]) -> bool:
        return bool(citations) or bool((payload.get("usage") or {}).get("num_search_queries"))

    def usage(self, payload: dict) -> Usage:
        usage = payload.get("usage") or {}
        base = openai_usage(usage)
        return Usage(base.prompt_tokens, base.completion_tokens, base.total_tokens, base.cached_tokens,
                     usage.get("reasoning_tokens", base.reasoning_tokens), usage.get("num_search_queries"))


DIALECT = Perplexity()
