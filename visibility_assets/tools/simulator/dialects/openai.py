"""How simulated OpenAI speaks (tests/fixtures/dialects/openai.json)."""

from __future__ import annotations

from visibility_assets.tools.simulator.dialects.base import SimDialect
from visibility_assets.tools.simulator.dialects.sources import cite_in_text


class OpenAI(SimDialect):
    reasoning_text = False  # Chat Completions returns reasoning tokens, never the reasoning
    moderation_in_band = True

    def cites_over(self, text_cites):
        return True  # links, not numbers: they never clash with the text's own markers

    def cite(self, text, sources, rng):
        # Search models link their sources inline; each annotation spans its link.
        return cite_in_text(text, sources, rng, lambda n, s: f"[{s.domain}]({s.url})", wrap=("(", ")"))


DIALECT = OpenAI()
