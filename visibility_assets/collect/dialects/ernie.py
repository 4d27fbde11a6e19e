"""ERNIE (Qianfan v2): search with `web_search: {enable, enable_citation, enable_trace}`, sources
in the top-level `search_results`, and a non-zero `flag` when moderation stopped the answer."""

from visibility_assets.collect.dialects.base import Dialect
from visibility_assets.config import Platform
from visibility_assets.core.answers import MODERATED, Citation


class Ernie(Dialect):
    name = "ernie"

    def search_params(self, platform: Platform) -> dict:
        return {"web_search": {"enable": True, "enable_citation": True, "enable_trace": True, "search_mode": "auto"}}

    def thinking_params(self, enabled: bool) -> dict:
        return {"enable_thinking": enabled}

    def outcome(self, finish_reason: str | None, payload: dict) -> str:
        if payload.get("flag"):
            return MODERATED
        return super().outcome(finish_reason, payload)

    def citations(self, payload: dict, message: dict) -> list[Citation]:
        return numbered_sources(payload.get("search_results"))


def numbered_sources(results, site_key: str | None = None) -> list[Citation]:
    """Sources given as [{index, url, title, ...}], in the platform's order."""
    found = []
    for position, result in enumerate(results or [], start=1):
        if isinstance(result, dict) and result.get("url"):
            found.append(Citation(result["url"], result.get("title"),
                                  result.get(site_key) if site_key else None, result.get("index") or position))
    return found


DIALECT = Ernie()
