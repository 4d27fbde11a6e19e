"""The text the analyzer reads: NFKC + case-folded, Traditional characters read as Simplified
(core/chinese_script.py), with positions mapped back to the original,
and the spans that are outside the matching scope (think blocks, URLs, link labels that are
only a domain, the trailing reference block).
"""

from __future__ import annotations

import re
import unicodedata
from bisect import bisect_right
from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache

from visibility_assets.core.chinese_script import to_simplified


@dataclass(slots=True)  # built once per answer: a frozen init costs 3x
class NormalizedText:
    original: str
    text: str  # NFKC, case-folded
    # The characters that did not fold to exactly one, in order: (index in text, index in
    # original, length folded). Between them text and original map one to one; most answers
    # have none.
    expansions: tuple[tuple[int, int, int], ...] = ()

    def original_spans(self, spans) -> list[tuple[int, int]]:
        """The original span of each object with .start and .end in the normalized text."""
        if not self.expansions:
            return [(s.start, s.end) for s in spans]
        starts = [e[0] for e in self.expansions]
        return [self._original_span(s.start, s.end, starts) for s in spans]

    def original_span(self, start: int, end: int) -> tuple[int, int]:
        """The original span of one span of the normalized text."""
        if not self.expansions:
            return start, end
        return self._original_span(start, end, [e[0] for e in self.expansions])

    def _original_span(self, start: int, end: int, starts: list[int]) -> tuple[int, int]:
        size = len(self.text)
        begin = self._original_index(start, starts) if start < size else len(self.original)
        stop = self._original_index(end - 1, starts) + 1 if 0 < end <= size else begin
        return begin, stop

    def _original_index(self, index: int, starts: list[int]) -> int:
        last = bisect_right(starts, index) - 1
        if last < 0:
            return index
        text_at, original_at, length = self.expansions[last]
        return original_at if index < text_at + length else original_at + 1 + index - text_at - length


FULL_WIDTH = re.compile("[\uff01-\uff5e\u3000]")
# The full-width punctuation of nearly every Chinese answer, with the character NFKC makes of it.
COMMON_FULL_WIDTH = tuple((char, chr(ord(char) - 0xFEE0)) for char in "，：（）！？；")
# Characters that may fold to other than one character or join a neighbour (an accent): all
# but ASCII, CJK ideographs and full-width forms, each of which folds to exactly one on its own.
MAY_CHANGE_LENGTH = re.compile("[^\x00-\x7f\u4e00-\u9fff\uff01-\uff5e]")


def _half_width_char(match: re.Match) -> str:
    char = match.group()
    return " " if char == "\u3000" else chr(ord(char) - 0xFEE0)


def _half_width(text: str) -> tuple[str, bool]:
    """The text with its full-width forms mapped as NFKC maps them (one character to one), and
    whether the result is NFKC-normalized. Full NFKC costs ~70 us on a Chinese answer because
    its full-width punctuation fails the quick check; mapped first, most answers pass it."""
    if unicodedata.is_normalized("NFKC", text):
        return text, True
    for full_width, ascii_form in COMMON_FULL_WIDTH:
        if full_width in text:
            text = text.replace(full_width, ascii_form)
    if unicodedata.is_normalized("NFKC", text):
        return text, True
    text = FULL_WIDTH.sub(_half_width_char, text)
    return text, unicodedata.is_normalized("NFKC", text)


def _fold(text: str) -> str:
    return unicodedata.normalize("NFKC", text).casefold()


_fold_char = lru_cache(maxsize=8192)(_fold)  # answers repeat their few unusual characters


def normalize(original: str) -> NormalizedText:
    """NFKC and case folding, with every position of the result mapped back to the original."""
    half, is_nfkc = _half_width(original)
    if is_nfkc:
        folded = half.casefold()
        if len(folded) == len(original):
            # Almost always: the full-width forms and the case fold one to one.
            return NormalizedText(original, to_simplified(folded))
    # Line by line: no character folds to or from a line break, and NFKC never reaches across
    # one. A line that needs no more than case folding keeps it when that keeps its length.
    pieces, expansions = [], []
    offset = shift = 0  # where the line starts in the original; text index minus original index
    for line, half_line in zip(original.split("\n"), half.split("\n"), strict=True):
        case_only = is_nfkc or unicodedata.is_normalized("NFKC", half_line)
        folded_line = half_line.casefold() if case_only else None
        if folded_line is None or len(folded_line) != len(line):
            folded_line, line_expansions = _fold_by_character(line)
            for index, length in line_expansions:
                expansions.append((offset + index + shift, offset + index, length))
                shift += length - 1
        pieces.append(folded_line)
        offset += len(line) + 1
    return NormalizedText(original, to_simplified("\n".join(pieces)), tuple(expansions))


def _fold_by_character(line: str) -> tuple[str, list[tuple[int, int]]]:
    """The line with each character folded on its own, so that every position maps back
    exactly (a letter and a separate accent stay two characters), and the (index, length) of
    the characters that did not fold to one. The runs between characters that can change
    length fold one to one and are folded whole."""
    pieces, line_expansions, position = [], [], 0
    for match in MAY_CHANGE_LENGTH.finditer(line):
        index = match.start()
        folded_char = _fold_char(match.group())
        pieces += (_fold(line[position:index]), folded_char)
        if len(folded_char) != 1:
            line_expansions.append((index, len(folded_char)))
        position = index + 1
    pieces.append(_fold(line[position:]))
    return "".join(pieces), line_expansions


# --- scope ----------------------------------------------------------------------------

THINK = re.compile(r"<think>.*?(?:</think>|\Z)", re.S)
URL = re.compile(r"(?:https?://|www\.)[^\s<>\"'\]\)】」》，。；、]+")
LINK_LABEL = re.compile(r"\[([^\]\n]{1,200})\]\(\s*(?:https?://|www\.)")
DOMAIN_ONLY = re.compile(r"^\s*(?:https?://)?(?:www\.)?[a-z0-9-]+(?:\.[a-z0-9-]+)*\.[a-z]{2,}(?:/\S*)?\s*$")
REFERENCE_HEADING = re.compile(
    r"^\s*(?:#{1,6}\s*)?(?:\*\*)?\s*(?:参考资料|参考来源|参考文献|参考链接|资料来源|信息来源|来源|引用|引用来源|"
    r"sources?|references?|citations?|further reading)\s*(?:\*\*)?\s*[:：]?\s*(?:\*\*)?\s*$"
)
# A line of a source list: "[1] title url", "1. [title](url)", "- title: url", or any line with a URL.
REFERENCE_MARKER = re.compile(r"^\s*(?:\[\^?\d+\^?\]|\[citation:\d+\]|\d+[.)]|[-*•])")
URL_START = re.compile(r"(?:https?://|www\.)\S")
BRACKETED_ENTRY = re.compile(r"^\s*(?:\[\^?\d+\^?\]|\[citation:\d+\])")


@dataclass(slots=True)
class Scope:
    """Spans of the normalized text that are not the answer body, each with its reason."""

    excluded: tuple[tuple[int, int, str], ...]  # before body_end: the block after it is out of scope whole
    body_end: int  # where the trailing reference block starts (len(text) when there is none)
    think: tuple[tuple[int, int], ...]
    blocks: tuple[tuple[int, int], ...]  # the excluded spans merged, in order: most hits are clear of them

    def reason_at(self, start: int, end: int) -> str | None:
        if start >= self.body_end:
            return "out_of_scope:references"
        for s, e, reason in self.excluded:
            if s < end and start < e:
                return reason
        return None


def find_scope(text: str, echo: Callable[[int], tuple[int, int] | None] | None = None) -> Scope:
    """echo: where the answer's opening quotes the question back (clean/echo.py), given where
    the answer starts (after a leading think block)."""
    think = tuple(m.span() for m in THINK.finditer(text)) if "<think>" in text else ()
    excluded = [(s, e, "out_of_scope:think") for s, e in think]
    opening = think[0][1] if think and not text[:think[0][0]].strip() else 0
    echoed = echo(opening) if echo else None
    if echoed:
        excluded.append((*echoed, "out_of_scope:question_echo"))
    body_end = reference_block_start(text, think)
    # The reference block is out of scope as a whole, so only the URLs and link labels before
    # it need spans (most answers keep their URLs in the block). None runs into the block: a
    # URL stays within its line, and a label's URL would have to open the block's first line,
    # which is its heading or a [n] entry. (No alias spans lines either: the config says so.)
    if text.find("http", 0, body_end) != -1 or text.find("www.", 0, body_end) != -1:
        excluded += [(m.start(), m.end(), "out_of_scope:url") for m in URL.finditer(text, 0, body_end)]
        for m in LINK_LABEL.finditer(text, 0, body_end) if text.find("](", 0, body_end) != -1 else ():
            if DOMAIN_ONLY.match(m.group(1)):
                excluded.append((m.start(1), m.end(1), "out_of_scope:link_label"))
    return Scope(tuple(excluded), body_end, think, _merged(excluded) if excluded else ())


def _merged(spans) -> tuple[tuple[int, int], ...]:
    merged: list[tuple[int, int]] = []
    for start, end, _ in sorted(spans):
        if merged and start <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(end, merged[-1][1]))
        else:
            merged.append((start, end))
    return tuple(merged)


def reference_block_start(text: str, think: tuple[tuple[int, int], ...] = ()) -> int:
    """Start of the trailing block of sources: a heading such as 参考资料/Sources with the entry
    lines after it, or (without a heading) trailing lines that start with a [n] marker."""
    begin = think[-1][1] if think else 0
    end = len(text)
    first_entry, all_bracketed = None, True
    while True:  # lines from the last, without splitting the whole answer
        line_start = text.rfind("\n", begin, end) + 1 or begin
        line = text[line_start:end]
        if line and not line.isspace():
            if not (REFERENCE_MARKER.match(line) or (("http" in line or "www." in line) and URL_START.search(line))):
                if REFERENCE_HEADING.match(line):
                    return line_start
                break
            first_entry = line_start
            all_bracketed = all_bracketed and bool(BRACKETED_ENTRY.match(line))
        if line_start == begin:
            break
        end = line_start - 1
    return first_entry if first_entry is not None and all_bracketed else len(text)


def strip_scope(text: str, scope: Scope) -> str:
    """The body with out-of-scope spans blanked (same length, so positions stay valid)."""
    if not scope.excluded and scope.body_end == len(text):
        return text
    pieces, position = [], 0
    for s, e, _ in sorted(scope.excluded):
        s, e = max(s, position), min(e, scope.body_end)
        if s < e:
            pieces += [text[position:s], " " * (e - s)]
            position = e
    pieces += [text[position:scope.body_end], " " * (len(text) - max(position, scope.body_end))]
    return "".join(pieces)
