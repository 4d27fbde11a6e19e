"""Qwen (DashScope, OpenAI-compatible mode): search with `enable_search` and `search_options`,
thinking with `enable_thinking`. Compatible mode returns no sources (the native protocol's
`output.search_info` has them); moderation is the error code `DataInspectionFailed`."""

from visibility_assets.collect.dialects.base import Dialect
from visibility_assets.config import Platform


class Qwen(Dialect):
    name = "qwen"
    moderation_codes = frozenset({"DataInspectionFailed", "data_inspection_failed"})
    billing_codes = frozenset({"Arrearage", "Throttling.AllocationQuota", "AllocationQuota"})

    def search_params(self, platform: Platform) -> dict:
        return {"enable_search": True, "search_options": {"forced_search": True, "enable_source": True,
                                                          "enable_citation": True, "citation_format": "[<number>]"}}

    def thinking_params(self, enabled: bool) -> dict:
        return {"enable_thinking": enabled}


DIALECT = Qwen()
