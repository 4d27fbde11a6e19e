"""OpenAI Chat Completions: search models take `web_search_options` and return their sources as
`message.annotations[]` of type `url_citation`."""

from visibility_assets.collect.dialects.base import Dialect
from visibility_assets.config import Platform
from visibility_assets.config.schema import Location
from visibility_assets.core.answers import Citation


class OpenAI(Dialect):
    name = "openai"
    # A 429 whose type or code says the quota or budget is spent, not that we were too fast.
    billing_codes = frozenset({"insufficient_quota", "credit_balance_exhausted", "project_spend_limit_exceeded",
                               "organization_spend_limit_exceeded", "billing_hard_limit_reached"})

    def search_params(self, platform: Platform) -> dict:
        return {"web_search_options": {}}  # with a search model (gpt-4o-search-preview, ...)

    def location_params(self, location: Location) -> dict:
        """`web_search_options.user_location`, of type approximate (country, region, city)."""
        approximate = {k: v for k, v in (("country", location.country), ("region", location.region),
                                          ("city", location.city)) if v is not None}
        return {"web_search_options": {"user_location": {"type": "approximate", "approximate": approximate}}}

    def thinking_params(self, enabled: bool) -> dict:
        return {"reasoning_effort": "high" if enabled else "none"}

    def citations(self, payload: dict, message: dict) -> list[Citation]:
        found = []
        for annotation in message.get("annotations") or []:
            cited = annotation.get("url_citation") if annotation.get("type") == "url_citation" else None
            if cited and cited.get("url"):
                found.append(Citation(cited["url"], cited.get("title"), index=len(found) + 1))
        return found


DIALECT = OpenAI()
