"""The context of each brand mention, which its sentiment is judged from: the option block a
mention opens (a list item, heading or bold line opening with the brand, down to the next
option), else its sentence, narrowed to its clause when the sentence names another brand too.

The body is NFKC-normalized, so its sentence and clause marks are ASCII (！？；，： are !?;,:)
but for 。. Each boundary is found with str.find and str.rfind from the mention outwards: a
mention costs the length of its sentence, not of the answer.
"""

from __future__ import annotations

import re
from bisect import bisect_left

SENTENCE_MARKS = ("。", "!", "?", ";", ". ")  # and a line break
CLAUSE_MARKS = (",", ":")
LIST_ITEM = re.compile(r"[ \t]*(?:\d{1,2}[.)、]|[-*+•]\s|[一二三四五六七八九十]+、|（[一二三四五六七八九十]+）)")
# What may stand between an option line's start and the brand it opens with.
OPTION_LABEL = re.compile(r"[\s#>*\-+•\d.)、（）()一二三四五六七八九十【】\[\]|:：]*")
BLOCK_START = re.compile(r"^[ \t]*(?:#{1,6}\s|\d{1,2}[.)、]\s*|[-*+•]\s|\*\*|[一二三四五六七八九十]+、|（[一二三四五六七八九十]+）)",
                         re.M)
BLOCK_MAX_CHARS = 600
# What a list item's block goes on over: the lines that open with a blank and hold more.
INDENTED_LINES = re.compile(r"(?:\n[ \t][^\S\n]*\S[^\n]*)*")
# What ends a heading's or bold line's block: the next line that opens an option (BLOCK_START, not indented).
NEXT_OPTION_LINE = re.compile(r"\n(?=#|\d{1,2}[.)、]|[-*+•]\s|\*\*|[一二三四五六七八九十]+、|（[一二三四五六七八九十]+）)")
BLOCK_FIRST = frozenset("#-*+•一二三四五六七八九十（ \t")  # what a BLOCK_START line opens with, or a digit


def mention_contexts(body: str, starts: list[int], cue_starts: list[int]) -> dict[int, tuple[int, int] | None]:
    """The context (start, end) of the mention at each of `starts`, the sorted distinct starts
    of every accepted hit (a context that holds another of them is narrowed to the clause), or
    None where the context holds none of `cue_starts` (the sorted starts of the sentiment cues):
    there is nothing to read, so its bounds are not looked for further than its line."""
    contexts: dict[int, tuple[int, int] | None] = {}
    blocks: dict[int, int] = {}  # option line start -> block end: hits on one line share the block
    size = len(body)
    # The marks the answer uses at all: most use few of them.
    sentence_marks = [mark for mark in SENTENCE_MARKS if mark in body]
    clause_marks = [mark for mark in CLAUSE_MARKS if mark in body]
    last = len(starts) - 1
    for index, start in enumerate(starts):
        line_start = body.rfind("\n", 0, start) + 1
        line_end = body.find("\n", start)
        if line_end < 0:
            line_end = size
        if _may_open_block(body[line_start]) and BLOCK_START.match(body, line_start) and OPTION_LABEL.fullmatch(
                body, line_start, start):
            low = line_start
            high = blocks.get(line_start)
            if high is None:
                high = blocks[line_start] = _block_end(body, line_start, line_end)
        elif not holds(cue_starts, line_start, line_end):
            contexts[start] = None  # a sentence lies within its line
            continue
        else:
            low, high = _sentence(body, start, line_start, line_end, sentence_marks)
            if index and starts[index - 1] >= low or index < last and starts[index + 1] < high:
                low, high = _clause(body, start, low, high, clause_marks)  # another mention in the sentence
        contexts[start] = (low, high) if holds(cue_starts, low, high) else None
    return contexts


def holds(positions: list[int], low: int, high: int) -> bool:
    """Whether one of the sorted positions lies in low..high."""
    index = bisect_left(positions, low)
    return index < len(positions) and positions[index] < high


def _sentence(body: str, start: int, line_start: int, line_end: int, marks: list[str]) -> tuple[int, int]:
    """From the end of the last sentence mark before `start` on its line to the end of the first
    one at or after it (the line break included, the answer's end without one)."""
    low = line_start
    for mark in marks:
        found = body.rfind(mark, low, start)
        if found != -1:
            low = found + len(mark)
    mark_at, high = line_end, min(line_end + 1, len(body))
    for mark in marks:
        found = body.find(mark, start, mark_at + len(mark) - 1)
        if found != -1:
            mark_at, high = found, found + len(mark)
    return low, high


def _clause(body: str, start: int, low: int, high: int, marks: list[str]) -> tuple[int, int]:
    """The clause of `start` within the sentence low..high."""
    for mark in marks:
        found = body.rfind(mark, low, start)
        if found != -1:
            low = found + 1
    mark_at = high
    for mark in marks:
        found = body.find(mark, start, mark_at)
        if found != -1:
            mark_at = found
    return low, min(mark_at + 1, high)


def _block_end(body: str, line_start: int, line_end: int) -> int:
    """The end of the option a line opens. A list item goes on over its indented lines; a
    heading or bold line over the paragraphs below it, to the next option line; at most
    BLOCK_MAX_CHARS."""
    size = len(body)
    limit = min(size, line_end + BLOCK_MAX_CHARS)
    # Up to the end of the line that holds the limit: a line that starts before it is read whole.
    seen = body.find("\n", limit)
    seen = size if seen < 0 else seen
    if LIST_ITEM.match(body, line_start):
        return min(INDENTED_LINES.match(body, line_end, seen).end(), limit)
    found = NEXT_OPTION_LINE.search(body, line_end, seen)
    return min(found.start(), limit) if found else limit


def _may_open_block(char: str) -> bool:
    """Whether a line that opens with `char` may match BLOCK_START (indented lines included)."""
    return char in BLOCK_FIRST or char.isdecimal()
