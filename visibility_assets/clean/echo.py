"""The user's question quoted back at the top of an answer ("您的问题是：…", "You asked: …",
"> 你的问题：…"): the user's words, not the answer's, so the brands it names are not mentions."""

from __future__ import annotations

import re
from functools import lru_cache

from visibility_assets.clean.text import normalize

CJK = re.compile(r"[\u4e00-\u9fff]")
WORD = re.compile(r"[a-z][a-z0-9+.-]{2,}")
STOPWORDS = frozenset(
    "the and for with which what best how are is you your who does that this from into about can "
    "should would most more than good better recommend recommended compare vs between".split()
)
# The marker that sets an echo apart, at the very top (after a think block); the echo runs to
# the first blank line. Normalized text: 問題 is 问题, full-width colons are ":".
ECHO_MARKER = re.compile(r"\s*(?:>\s*)?(?:\*\*)?(?:(?:您|你)的问题(?:是)?|问题|you asked|your question(?: was| is)?)"
                         r"\s*(?:\*\*)?\s*:")
# Share of the question's terms an echo repeats: it is the question, not an answer that opens "问题：".
ECHO_OVERLAP = 0.6


@lru_cache(maxsize=4096)
def question_terms(question: str) -> frozenset[str]:
    """CJK bigrams and Latin words of a question (questions repeat: cached)."""
    q = normalize(question).text
    terms = {q[i:i + 2] for i in range(len(q) - 1) if CJK.match(q[i]) and CJK.match(q[i + 1])}
    # A plural is kept without its s, so that the singular counts too ("outages", "outage").
    return frozenset(terms | {w[:-1] if len(w) > 4 and w.endswith("s") else w
                              for w in WORD.findall(q) if w not in STOPWORDS})


def question_echo(text: str, start: int, question: str) -> tuple[int, int] | None:
    """The span of the marked echo of the question that opens the text at start, if any."""
    marker = ECHO_MARKER.match(text, start)
    if not marker:
        return None
    end = text.find("\n\n", marker.end())
    end = len(text) if end == -1 else end
    terms = question_terms(question)
    if not terms:
        return None
    echoed = text[marker.end():end]
    if sum(1 for term in terms if term in echoed) < ECHO_OVERLAP * len(terms):
        return None
    return start, end
