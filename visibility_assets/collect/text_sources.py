"""The URLs an answer's text cites, beside the platform's structured sources."""

from __future__ import annotations

from visibility_assets.core.answers import TEXT, Citation
from visibility_assets.core.urls import text_citations


def with_text_citations(platform_citations: list[Citation], text: str) -> list[Citation]:
    """The platform's sources first, then each URL of the text they do not already hold."""
    known = {c.url for c in platform_citations}
    extra = [Citation(url, source=TEXT) for url in text_citations(text) if url not in known]
    return [*platform_citations, *extra]
