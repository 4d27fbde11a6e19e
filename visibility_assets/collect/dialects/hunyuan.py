"""Hunyuan (Tencent, OpenAI-compatible): search with `enable_enhancement` (plus `citation` and
`search_info`), sources in `search_info.search_results`, moderation as finish reason `sensitive`."""

from visibility_assets.collect.dialects.base import Dialect
from visibility_assets.collect.dialects.ernie import numbered_sources
from visibility_assets.config import Platform
from visibility_assets.core.answers import Citation


class Hunyuan(Dialect):
    name = "hunyuan"

    def search_params(self, platform: Platform) -> dict:
        return {"enable_enhancement": True, "force_search_enhancement": True, "citation": True, "search_info": True}

    def citations(self, payload: dict, message: dict) -> list[Citation]:
        # `text` holds the site's name (the native API's SearchResults[].Text).
        return numbered_sources((payload.get("search_info") or {}).get("search_results"), site_key="text")


DIALECT = Hunyuan()
