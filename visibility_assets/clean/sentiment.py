"""How an answer speaks of each brand it names: positive, neutral or negative, with its cue words.

Judged from the brand's context: the sentences that name it, and when it names an option (a
list item, a heading, a bold line), that option's block down to the next option. Cues come
from a lexicon of Chinese and English evaluative words; a negator just before a cue turns it
(不稳定, not reliable, 没有明显短板); after a contrast (但, 不过, however, but) the clause weighs
more than before it; a comparison (A 比 B 更稳定, A is faster than B) turns the cue for the brand
after 比/than. Advice against the brand counts as a strong negative cue. A brand is positive or
negative when that side outweighs the other at least twice; praised and criticised alike, it is
neutral (a pros-and-cons answer is not simply positive).

Lexicon and rules rather than a model: nothing to download, explainable cues, and fast: the
words (clean/lexicon.py) are located by the alias matcher's one pass (clean/cues.py), each
mention's context (clean/mention_context.py) is scored only when a cue lies in it, and its
clauses only when it compares. tools/bench/sentiment_compare.py measures it against a small
packaged model on the labelled set in tests/eval.
"""

from __future__ import annotations

import re
from bisect import bisect_left
from typing import NamedTuple

from visibility_assets.clean.cues import AnswerCues, Cue
from visibility_assets.clean.mention_context import holds, mention_contexts

POSITIVE, NEUTRAL, NEGATIVE = "positive", "neutral", "negative"
BEFORE_CONTRAST, AFTER_CONTRAST = 0.75, 1.25
ADVISED_AGAINST = 2.0  # the analyzer found advice against the brand
DOMINANCE = 2.0  # one side must outweigh the other this many times
# What ends a clause of a comparison (！？；，： are ASCII in the NFKC body), and a "." before a space.
CLAUSE_MARK = re.compile(r"[,:。!?;\n]|\.(?=\s)")


class Sentiment(NamedTuple):  # a tuple: an answer makes a dozen, and a frozen dataclass costs 3x
    label: str
    cues: tuple[str, ...]  # "+推荐", "-偏贵", "-not reliable" …, in order of appearance
    score: float


class BrandSentiment(NamedTuple):
    overall: Sentiment  # over every context that names the brand
    mentions: tuple[Sentiment, ...]  # one per hit, from that hit's context


# A scored context: positive and negative weight, its cues, and the sentiment they make.
Scored = tuple[float, float, list[str], Sentiment]
SILENT = Sentiment(NEUTRAL, (), 0.0)  # of a context without cues
COMPARES = object()  # a context that compares: its score depends on where the brand stands in it


def judge_brands(body: str, cues: AnswerCues, mentions: dict[str, list[int]], advised: set[str], starts: list[int],
                 every_context: dict[int, tuple[int, int]] | None = None) -> dict[str, BrandSentiment]:
    """The sentiment of each brand and of each of its mentions, from the contexts of its hits in
    `body` (normalized, lower case). cues: find_cues; mentions: the starts of each brand's
    accepted hits, in text order, the brands in order of first mention; advised: the brands the
    answer advises against; starts: every accepted hit's start, sorted, once; every_context: each
    hit's context found already (the learned model reads them all), else they are looked for here."""
    # A context with a comparison but no cue word is read too: "X 不如 Y" ranks the two by itself.
    markers = sorted(cues.starts + cues.flips_before.starts) if cues.flips_before.starts else cues.starts
    if every_context is None:
        contexts = mention_contexts(body, starts, markers)
    else:  # the same spans: only those that hold a cue are read
        contexts = {start: span if span and holds(markers, *span) else None for start, span in every_context.items()}
    scores: dict[tuple[int, int], Scored | object] = {}  # one that compares nothing scores the same for every brand
    judged = {}
    for name, brand_starts in mentions.items():
        by_context: dict[tuple[int, int], Scored] = {}
        per_hit = []
        for start in brand_starts:
            context = contexts[start]
            if context is None:
                per_hit.append(SILENT)
                continue
            scored = by_context.get(context)
            if scored is None:
                scored = scores.get(context)
                if scored is None:
                    scored = scores[context] = _context_score(context, cues)
                if scored is COMPARES:
                    scored = _score_comparing(body, context, cues, [s for s in brand_starts if context[0] <= s < context[1]])
                by_context[context] = scored
            per_hit.append(scored[3])
        judged[name] = BrandSentiment(_overall(by_context, name in advised), tuple(per_hit))
    return judged


def _overall(by_context: dict[tuple[int, int], Scored], advised_against: bool) -> Sentiment:
    """A brand's sentiment over the contexts of its mentions that hold a cue."""
    if not advised_against:
        if not by_context:
            return SILENT
        if len(by_context) == 1:
            return next(iter(by_context.values()))[3]
    score_pos = sum(scored[0] for scored in by_context.values())
    score_neg = sum(scored[1] for scored in by_context.values())
    found = [cue for scored in by_context.values() for cue in scored[2]]
    if advised_against:
        score_neg += ADVISED_AGAINST
        found.append("-advised against")
    return _sentiment(score_pos, score_neg, found)


def _sentiment(positive: float, negative: float, cues: list[str]) -> Sentiment:
    return Sentiment(_label(positive, negative), tuple(dict.fromkeys(cues)), round(positive - negative, 3))


def _scored(positive: float, negative: float, cues: list[str]) -> Scored:
    return positive, negative, cues, _sentiment(positive, negative, cues)


def _context_score(context: tuple[int, int], cues: AnswerCues) -> Scored | object:
    """The score of a context that holds a cue, or COMPARES when it depends on the brand."""
    low, high = context
    if cues.flips.first_end(low, high) is not None:
        return COMPARES
    return _score(cues.cues[bisect_left(cues.starts, low):bisect_left(cues.starts, high)],
                  cues.contrasts.first_end(low, high))


def _score(cues: list[Cue], turn_after: int | None) -> Scored:
    """Positive and negative weight of a context that compares nothing, and its cues; the
    context's first contrast ends at turn_after."""
    score_pos = score_neg = 0.0
    found: list[str] = []
    for start, word, positive in cues:
        weight = 1.0 if turn_after is None else AFTER_CONTRAST if start >= turn_after else BEFORE_CONTRAST
        if positive:
            score_pos += weight
            found.append("+" + word)
        else:
            score_neg += weight
            found.append("-" + word)
    return _scored(score_pos, score_neg, found)


def _score_comparing(body: str, context: tuple[int, int], cues: AnswerCues, hits: list[int]) -> Scored:
    """Positive and negative weight of a context that compares, and its cues; `hits` are the
    brand's starts in it. A cue turns in a clause that puts the brand on the lesser side."""
    low, high = context
    turned = _turned_clauses(body, context, cues, hits)
    turn_after = cues.contrasts.first_end(low, high)
    score_pos = score_neg = 0.0
    found: list[str] = []
    for start, word, cue_positive in cues.cues[bisect_left(cues.starts, low):bisect_left(cues.starts, high)]:
        positive = cue_positive
        for clause_start, clause_end in turned:
            if clause_start <= start < clause_end:
                positive = not positive
                break
        weight = 1.0 if turn_after is None else AFTER_CONTRAST if start >= turn_after else BEFORE_CONTRAST
        if positive:
            score_pos += weight
        else:
            score_neg += weight
        found.append(("+" if positive else "-") + word)
    for start, end, _ in _bare_comparisons(body, context, cues):
        # "X 不如 Y", "X lags behind Y" with no word for the aspect: X loses one point, Y gains one.
        before = any(start > hit >= _clause(body, start, low, high)[0] for hit in hits)
        after = any(end <= hit < _clause(body, start, low, high)[1] for hit in hits)
        if after and not before:
            score_pos += 1.0
            found.append("+" + body[start:end])
        elif before and not after:
            score_neg += 1.0
            found.append("-" + body[start:end])
    return _scored(score_pos, score_neg, found)


def _bare_comparisons(body: str, context: tuple[int, int], cues: AnswerCues) -> list:
    """The comparisons of the context whose clause holds no cue word ("X 不如 Y", "lags behind Y")."""
    low, high = context
    flips = cues.flips_before
    bare = []
    for start, end, _ in flips.turns[bisect_left(flips.starts, low):bisect_left(flips.starts, high)]:
        clause_start, clause_end = _clause(body, start, low, high)
        if bisect_left(cues.starts, clause_start) == bisect_left(cues.starts, clause_end):
            bare.append((start, end, None))
    return bare


def _turned_clauses(body: str, context: tuple[int, int], cues: AnswerCues, hits: list[int]) -> list[tuple[int, int]]:
    """The clauses of the context that put the brand on the lesser side of a comparison (only
    one with a comparison word can). The brand is a clause's subject when named in it, else the
    option it belongs to (named before): "…，但生态不如阿里云丰富" speaks ill of the option, well of
    阿里云."""
    low, high = context
    turned = []
    clause_end = low
    flips = cues.flips
    for flip in flips.starts[bisect_left(flips.starts, low):bisect_left(flips.starts, high)]:
        if flip < clause_end:  # in the clause before
            continue
        clause_start, clause_end = _clause(body, flip, low, high)
        index = bisect_left(hits, clause_start)
        own = hits[index] if index < len(hits) and hits[index] < clause_end else None
        if (own is not None and cues.flips_after.first_end(clause_start, own) is not None) or \
                cues.flips_before.first_end(clause_start if own is None else own, clause_end) is not None:
            turned.append((clause_start, clause_end))
    return turned


def _clause(body: str, start: int, low: int, high: int) -> tuple[int, int]:
    """The clause of the context low..high that holds `start`: between clause marks, a "." that
    a space follows within the context being one."""
    clause_start = low
    for mark in CLAUSE_MARK.finditer(body, low, start):
        clause_start = mark.end()
    mark = CLAUSE_MARK.search(body, start, high)
    return clause_start, mark.start() if mark else high


def _label(positive: float, negative: float) -> str:
    if positive > 0 and positive >= DOMINANCE * negative:
        return POSITIVE
    if negative > 0 and negative >= DOMINANCE * positive:
        return NEGATIVE
    return NEUTRAL
