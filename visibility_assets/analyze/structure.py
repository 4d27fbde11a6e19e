"""Option lists in an answer: numbered or bulleted items, table rows, per-option headings and
runs of standalone bold lines. Each structure is a list of items with the span of the item's
lead (the option it names); the caller picks the first structure whose leads name a brand.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

# A list item: a number (1. 2) 3、 一、) or a marker (- * + • ·), with at most one space before it.
LIST_ITEM = re.compile(r" ?(?:(\d{1,2})[.)、](?!\d)\s*|[一二三四五六七八九十]{1,3}、\s*|[-*+•·]\s+)(?=\S)")
HEADING = re.compile(r"^(#{1,6})\s+(?=\S)")
HEADING_NUMBER = re.compile(r"\d{1,2}[.)、]\s*")
BOLD_LINE = re.compile(r"^\s*(?:[^\w\s*#|>-]{1,3}\s*)?\*\*([^*\n]{1,80})\*\*\s*[:：]?\s*$")
TABLE_ROW = re.compile(r"^\s*\|.*\|\s*$")
TABLE_SEPARATOR = re.compile(r"^\s*\|?\s*:?-{2,}:?\s*(\|\s*:?-{2,}:?\s*)*\|?\s*$")
# First characters of lines that can start an item (digits, Chinese numerals, markers).
NUMBER_STARTS = frozenset("0123456789一二三四五六七八九十")
BULLET_STARTS = frozenset("-*+•·")
ITEM_STARTS = NUMBER_STARTS | BULLET_STARTS
NOT_BOLD_STARTS = NUMBER_STARTS | {"-"}
LEAD_END = re.compile(r"[:：—–(（,，。;；|]| - ")
# Section titles that a heading or bold-line run holds besides its options.
SECTION_TITLE = re.compile(
    r"^\s*(?:\d{1,2}[.)、]\s*)?(?:概述|简介|引言|总结|小结|结论|综上|建议|选择建议|购买建议|选购建议|推荐理由|对比|对比总结|"
    r"横向对比|注意事项|常见问题|其他选择|其他|overview|introduction|summary|conclusion|verdict|"
    r"recommendations?|comparison|bottom line|final thoughts|faq|tl;dr|key factors)\s*[:：]?\s*$"
)


# An item: (lead_start, lead_end, titled), the span of the option it names and whether that
# lead is a title (bold, heading, table cell) rather than a sentence's start. A plain tuple:
# answers hold dozens of items, and a named tuple costs five times more to build.
Item = tuple[int, int, bool]


@dataclass(slots=True)
class Structure:
    kind: str  # numbered | bullet | table | heading | bold
    items: list[Item] = field(default_factory=list)
    last_number: int = 0
    open: bool = True


def _lead(line: str, offset: int, content_start: int) -> Item:
    """The option an item names: its bold opening, else the text up to the first separator."""
    if line.startswith("**", content_start):
        close = line.find("**", content_start + 2)
        if close > content_start + 2:
            return offset + content_start + 2, offset + close, True
    match = LEAD_END.search(line, content_start)
    end = match.start() if match and match.start() > content_start else len(line)
    return offset + content_start, offset + end, False


RANK_CELL = re.compile(r"^\s*(?:#|no\.?\s*|top\s*)?\d{1,2}\.?\s*$")


def _option_cell(line: str, offset: int) -> Item:
    """The first cell of a table row, or the next one when the first only holds a rank number."""
    start = line.index("|") + 1
    stop = line.find("|", start)
    if stop == -1:
        stop = len(line)
    else:
        after = line.find("|", stop + 1)
        if after != -1 and RANK_CELL.match(line[start:stop]):
            start, stop = stop + 1, after
    cell = line[start:stop]
    begin = start + len(cell) - len(cell.lstrip())
    return offset + begin, offset + start + len(cell.rstrip()), True


def find_structures(body: str) -> list[Structure]:
    """Every option structure of the body, in the order they start. One pass over the lines:
    a table row extends the open table and any other line ends it; a heading extends the run
    of its level, closes deeper runs and ends the list and the bold run; a bold line extends
    the bold run and ends the list; an item extends the open list of its kind; a paragraph
    line that is not indented ends the list (a later item continues it only by numbering)."""
    structures: list[Structure] = []
    current_list: Structure | None = None  # numbered or bullet list being read
    headings: dict[int, Structure] = {}  # open heading runs by level
    bold: Structure | None = None
    table: Structure | None = None
    table_seen_separator = False
    offset = 0
    for line in body.split("\n"):
        line_offset = offset
        offset += len(line) + 1
        stripped = line.strip()
        if not stripped:
            continue
        # Each pattern runs only on lines whose first character can start it.
        first = stripped[0]
        if first == "|" and TABLE_ROW.match(line):
            if table is None:
                table = Structure("table")
                table_seen_separator = False
                structures.append(table)
            elif "--" in line and TABLE_SEPARATOR.match(line):  # most rows hold no "--"
                table_seen_separator = True
            elif table_seen_separator:
                table.items.append(_option_cell(line, line_offset))
            continue
        table = None
        if first == "#":
            heading = HEADING.match(line)
            if heading:
                level = len(heading.group(1))
                current_list = None
                bold = None
                for deeper in [lv for lv in headings if lv > level]:
                    del headings[deeper]  # a heading closes the runs of its sub-headings
                if SECTION_TITLE.match(line[heading.end():].replace("*", "")):
                    continue
                if level not in headings:
                    headings[level] = Structure("heading")
                    structures.append(headings[level])
                text_start = heading.end()
                number = HEADING_NUMBER.match(line, text_start)
                headings[level].items.append(_lead(line, line_offset, number.end() if number else text_start))
                continue
        elif first in ITEM_STARTS or "**" in stripped[:6]:
            # A bold line opens with ** or a symbol, never with a number or a dash.
            bold_line = first not in NOT_BOLD_STARTS and "**" in stripped and BOLD_LINE.match(line)
            if bold_line:
                if SECTION_TITLE.match(bold_line.group(1)):
                    continue
                if bold is None:
                    bold = Structure("bold")
                    structures.append(bold)
                bold.items.append((line_offset + bold_line.start(1), line_offset + bold_line.end(1), True))
                current_list = None
                continue
            item = first in ITEM_STARTS and LIST_ITEM.match(line)
            if item:
                # The first character decides which branch of LIST_ITEM matched.
                kind = "bullet" if first in BULLET_STARTS else "numbered"
                digits = item.group(1)
                number = int(digits) if digits else 0
                if current_list is None or current_list.kind != kind or (
                    not current_list.open and not (kind == "numbered" and number == current_list.last_number + 1)
                ):
                    current_list = Structure(kind)
                    structures.append(current_list)
                current_list.open = True
                current_list.last_number = number
                current_list.items.append(_lead(line, line_offset, item.end()))
                continue
        # A paragraph: it ends a list, which a later item continues only by numbering.
        if current_list is not None and not line.startswith((" ", "\t")):
            current_list.open = False
    return structures
