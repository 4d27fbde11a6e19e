"""What every dialect reads a platform's response into: one normalized answer."""

from __future__ import annotations

from dataclasses import dataclass, field, fields

ANSWERED, TRUNCATED, MODERATED = "answered", "truncated", "moderated"
PLATFORM, TEXT = "platform", "text"  # where a citation came from


@dataclass(frozen=True)
class Citation:
    url: str
    title: str | None = None
    site: str | None = None
    index: int | None = None  # the platform's own reference number, else the position
    source: str = PLATFORM


@dataclass(frozen=True)
class Usage:
    """Token and search counts; None where the platform does not report the figure."""

    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    total_tokens: int | None = None
    cached_tokens: int | None = None
    reasoning_tokens: int | None = None
    search_count: int | None = None

    def __add__(self, other: Usage) -> Usage:
        """Rounds of one request (a tool loop) add up; unknown stays unknown only if unknown in both."""
        def plus(a: int | None, b: int | None) -> int | None:
            return None if a is None and b is None else (a or 0) + (b or 0)
        return Usage(**{f.name: plus(getattr(self, f.name), getattr(other, f.name)) for f in fields(self)})


@dataclass
class NormalizedAnswer:
    outcome: str  # answered | truncated | moderated
    text: str  # the answer, without the platform's reasoning
    reasoning_text: str | None = None
    finish_reason: str | None = None
    model: str | None = None
    system_fingerprint: str | None = None  # the deployment that answered, where the platform says
    citations: list[Citation] = field(default_factory=list)
    search_used: bool = False
    usage: Usage = field(default_factory=Usage)
    tool_rounds: int = 0  # requests sent back to the platform with a tool's result (kimi's search)
    search_queries: list[str] = field(default_factory=list)  # what its search looked up, where the response says
