"""What the sentiment rules read in an answer body, taken from the alias matcher's one pass: the
lexicon's cues with their polarity after negation, and the words that turn them, contrasts and
comparisons (clean/lexicon.py).

The pass ran over the text; the body is that text with its out-of-scope spans blanked, so a
match that touches a blanked span is none of the body's. Cues are the lexicon's leftmost-longest
matches (推荐 inside 不推荐 is part of that cue); a Latin word counts only where it does not run
into a neighbouring letter (a turning word: word character, as a regular expression's \\b).
"""

from __future__ import annotations

import re
from bisect import bisect_left
from collections.abc import Sequence
from dataclasses import dataclass, field

from visibility_assets.clean.lexicon import (
    CONTRASTS,
    FLIPS_AFTER,
    FLIPS_BEFORE,
    NEGATIVE_WORDS,
    NEGATORS_EN,
    NEGATORS_ZH,
    NOT_NEGATORS_ZH,
    POSITIVE_WORDS,
)

LEXICON = tuple(sorted(set(NEGATIVE_WORDS) | set(POSITIVE_WORDS), key=lambda w: (-len(w), w)))
MARKERS = (*LEXICON, *CONTRASTS, *FLIPS_AFTER, *FLIPS_BEFORE)  # what the matcher's pass must locate
_POSITIVE = frozenset(POSITIVE_WORDS) - frozenset(NEGATIVE_WORDS)
NEGATOR_ZH = re.compile("|".join(NEGATORS_ZH))
# A window without one of these characters holds no Chinese negator: most cues need no search.
NEGATOR_ZH_FIRSTS = frozenset(word[0] for word in NEGATORS_ZH)
NOT_NEGATOR_ZH = re.compile("|".join(NOT_NEGATORS_ZH))
# Each English negator holds one of these (n't read as not): without one, no word needs reading.
NEGATION_HINT_EN = re.compile(r"no|n't|never|hardly|without|lack")
NOT_ONLY_EN = re.compile(r"\bnot only\b|\bno doubt\b|\bno wonder\b")
_NEGATORS_EN = frozenset(NEGATORS_EN)
# The negators that may turn a word: a Chinese one within the 4 characters before it (不稳定), an
# English one within the 3 words before it (not reliable); None: it carries its own (不推荐, not
# only). A "negator" that belongs to another word does not turn it (不仅 not only, 无论 whatever).
ZH, EN = "zh", "en"
WORD, CONTRAST, FLIP_AFTER, FLIP_BEFORE = range(4)

# A cue: (start, word as judged, positive after negation); a turn: (start, end, whether it ends a
# word of the body there). Plain tuples: an answer holds dozens.
Cue = tuple[int, str, bool]
Turn = tuple[int, int, bool]


def marker_table(patterns: Sequence[str | None]) -> list[tuple | None]:
    """By pattern index of an automaton that holds MARKERS among its patterns (None for others):
    what find_cues needs to know of each."""
    roles: dict[str | None, tuple] = {
        word: (WORD, word, word in _POSITIVE, word[0].isascii(), _negation(word)) for word in LEXICON}
    for kind, words in ((CONTRAST, CONTRASTS), (FLIP_AFTER, FLIPS_AFTER), (FLIP_BEFORE, FLIPS_BEFORE)):
        roles.update((word, (kind, word[0].isascii())) for word in words)
    return [roles.get(pattern) for pattern in patterns]


def _negation(word: str) -> str | None:
    if word[0] in "不没无未" or word.startswith(("not ", "no ")):
        return None
    return EN if word[0].isascii() else ZH


@dataclass(slots=True)
class Turns:
    """The occurrences of one kind of turning word, in order."""

    starts: list[int] = field(default_factory=list)
    turns: list[Turn] = field(default_factory=list)

    def first_end(self, low: int, high: int) -> int | None:
        """Where the first occurrence within low..high ends: the one a regular expression finds
        in body[low:high] (whose end ends every word)."""
        for start, end, word_end in self.turns[bisect_left(self.starts, low):]:
            if start >= high:
                return None
            if end <= high and (word_end or end == high):
                return end
        return None


@dataclass(slots=True)
class AnswerCues:
    starts: list[int] = field(default_factory=list)  # of the cues
    cues: list[Cue] = field(default_factory=list)
    contrasts: Turns = field(default_factory=Turns)
    flips_after: Turns = field(default_factory=Turns)
    flips_before: Turns = field(default_factory=Turns)
    flips: Turns = field(default_factory=Turns)  # both kinds of comparison


def find_cues(body: str, found: list[tuple[int, int, int]], table: list, body_end: int,
              blocks: tuple[tuple[int, int], ...]) -> AnswerCues:
    """The body's cues and turning words. found: the pass's matches over the text, (pattern
    index, start, end) by start and the longest first, of which `table` (marker_table) names the
    markers; the text's spans in `blocks` and from `body_end` on are blank in the body."""
    answer = AnswerCues()
    turns = (None, answer.contrasts, answer.flips_after, answer.flips_before)
    taken, block, block_count, size = 0, 0, len(blocks), len(body)
    for index, start, end in found:
        entry = table[index]
        if entry is None or end > body_end:
            continue
        while block < block_count and blocks[block][1] <= start:
            block += 1
        if block < block_count and blocks[block][0] < end:
            continue
        if entry[0] != WORD:
            kind, latin = entry
            if latin and start > 0 and _is_word(body[start - 1]):
                continue
            turn = (start, end, not latin or end == size or not _is_word(body[end]))
            for kinds in (turns[kind], answer.flips) if kind != CONTRAST else (turns[kind],):
                kinds.starts.append(start)
                kinds.turns.append(turn)
            continue
        if start < taken:
            continue
        taken = end
        _, word, positive, latin, negation = entry
        if latin and (start > 0 and body[start - 1].isalnum() or end < size and body[end].isalnum()):
            continue
        if negation == ZH:  # inline: most cues are Chinese
            low = start - 4 if start > 4 else 0
            negated = not NEGATOR_ZH_FIRSTS.isdisjoint(body[low:start]) and NEGATOR_ZH.search(
                body, low, start) and not NOT_NEGATOR_ZH.search(body, max(0, start - 5), start)
        else:
            negated = negation == EN and _negated_en(body, start)
        if negated:
            positive, word = not positive, "not " + word
        answer.starts.append(start)
        answer.cues.append((start, word, positive))
    return answer


def _is_word(char: str) -> bool:
    return char.isalnum() or char == "_"


def _negated_en(text: str, position: int) -> bool:
    """A negator within the 3 words before the cue, unless it is one of "not only", "no doubt"."""
    low = max(0, position - 30)
    if not NEGATION_HINT_EN.search(text, low, position):
        return False
    before = text[low:position].replace("n't", " not")
    words = before.split()[-3:]
    return any(w.strip(".,;:!?()") in _NEGATORS_EN for w in words) and not NOT_ONLY_EN.search(before)
