"""The text the analyzer reads: NFKC + case-folded, with positions mapped back to the original,
and the spans that are outside the matching scope (think blocks, URLs, link labels that are
only a domain, the trailing reference block).
"""

from __future__ import annotations

import re
import unicodedata
from bisect import bisect_right
from dataclasses import dataclass
from functools import lru_cache


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
# Characters that may fold to other than one character: all but ASCII, CJK ideographs and
# full-width forms (each of those folds to exactly one).
MAY_CHANGE_LENGTH = re.compile("[^\x00-\x7f\u4e00-\u9fff\uff01-\uff5e]")


def _half_width(match: re.Match) -> str:
    char = match.group()
    return " " if char == "\u3000" else chr(ord(char) - 0xFEE0)


def _fold(text: str) -> str:
    """NFKC and case folding. Full NFKC costs ~70 us on a Chinese answer because its
    full-width punctuation fails the quick check; mapping that range first (which is what
    NFKC does to it) leaves most answers already normalized, at ~15 us."""
    if not unicodedata.is_normalized("NFKC", text):
        half = text
        for full_width, ascii_form in COMMON_FULL_WIDTH:
            if full_width in half:
                half = half.replace(full_width, ascii_form)
        if not unicodedata.is_normalized("NFKC", half):
            half = FULL_WIDTH.sub(_half_width, half)
            if not unicodedata.is_normalized("NFKC", half):
                # Only the lines that need it (NFKC never reaches across a line break): the
                # CJK text around one … costs more to normalize than the rest of the analysis.
                half = "\n".join(line if unicodedata.is_normalized("NFKC", line) else unicodedata.normalize("NFKC", line)
                                 for line in half.split("\n"))
        text = half
    return text.casefold()


@lru_cache(maxsize=8192)
def _fold_char(char: str) -> str:
    return _fold(char)


def normalize(original: str) -> NormalizedText:
    folded = _fold(original)
    if len(folded) == len(original):
        # Almost always: full-width letters and punctuation fold one to one.
        return NormalizedText(original, folded)
    # Some characters fold to several (… -> ..., ℃ -> °c). No character folds to or from a
    # line break and folding never reaches across one, so only the lines that changed length
    # need a look, and in them only the characters that can change length.
    pieces, expansions = [], []
    offset = shift = 0  # where the line starts in the original; text index minus original index
    for line, folded_line in zip(original.split("\n"), folded.split("\n"), strict=True):
        if len(folded_line) != len(line):
            line_expansions = [(m.start(), n) for m in MAY_CHANGE_LENGTH.finditer(line)
                               if (n := len(_fold_char(m.group()))) != 1]
            if len(line) + sum(n - 1 for _, n in line_expansions) != len(folded_line):
                # Folding joined characters (a letter and its accent): fold each one alone.
                folded_chars = [_fold_char(char) for char in line]
                folded_line = "".join(folded_chars)
                line_expansions = [(i, len(f)) for i, f in enumerate(folded_chars) if len(f) != 1]
            for index, length in line_expansions:
                expansions.append((offset + index + shift, offset + index, length))
                shift += length - 1
        pieces.append(folded_line)
        offset += len(line) + 1
    return NormalizedText(original, "\n".join(pieces), tuple(expansions))


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

    excluded: tuple[tuple[int, int, str], ...]
    body_end: int  # where the trailing reference block starts (len(text) when there is none)
    think: tuple[tuple[int, int], ...]
    blocks: list[tuple[int, int]]  # the excluded spans merged, in order: most hits are clear of them

    def reason_at(self, start: int, end: int) -> str | None:
        if start >= self.body_end:
            return "out_of_scope:references"
        if not self.excluded:
            return None
        for s, e, reason in self.excluded:
            if s < end and start < e:
                return reason
        return None


def find_scope(text: str) -> Scope:
    think = tuple(m.span() for m in THINK.finditer(text)) if "<think>" in text else ()
    excluded = [(s, e, "out_of_scope:think") for s, e in think]
    body_end = reference_block_start(text, think)
    # URLs and link labels lie within a line and the reference block starts at one, so only
    # those before it need spans: most answers keep their URLs in the block.
    if text.find("http", 0, body_end) != -1 or text.find("www.", 0, body_end) != -1:
        excluded += [(m.start(), m.end(), "out_of_scope:url") for m in URL.finditer(text, 0, body_end)]
        for m in LINK_LABEL.finditer(text, 0, body_end) if text.find("](", 0, body_end) != -1 else ():
            if DOMAIN_ONLY.match(m.group(1)):
                excluded.append((m.start(1), m.end(1), "out_of_scope:link_label"))
    return Scope(tuple(excluded), body_end, think, _merged(excluded) if excluded else [])


def _merged(spans) -> list[tuple[int, int]]:
    merged: list[tuple[int, int]] = []
    for start, end, _ in sorted(spans):
        if merged and start <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(end, merged[-1][1]))
        else:
            merged.append((start, end))
    return merged


def reference_block_start(text: str, think: tuple[tuple[int, int], ...] = ()) -> int:
    """Start of the trailing block of sources: a heading such as 参考资料/Sources with the entry
    lines after it, or (without a heading) trailing lines that start with a [n] marker."""
    begin = think[-1][1] if think else 0
    end = len(text)
    first_entry, all_bracketed = None, True
    while True:  # lines from the last, without splitting the whole answer
        line_start = max(text.rfind("\n", begin, end) + 1, begin)
        line = text[line_start:end]
        if line.strip():
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
