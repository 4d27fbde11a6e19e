"""Option lists in an answer: numbered or bulleted items, table rows, per-option headings and
runs of standalone bold lines. Each structure is a list of items with the span of the item's
lead (the option it names); the caller picks the first structure whose leads name a brand.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from visibility_assets.clean.json_lists import json_option_lists

CN_NUMERAL = "[一二三四五六七八九十]{1,3}"
# A list item, with at most one space before it: a number (1. 2) 3、 1️⃣), a Chinese ordinal
# (一、 and (一), which is what NFKC makes of （一）), or a marker (- * + • ·). Group 1 or 3 holds
# the digits, 2 or 4 the Chinese numeral.
LIST_ITEM = re.compile(
    r" ?(?:(\d{1,2})(?:[.)、](?!\d)|\ufe0f?\u20e3|\s*\((?:并列|tie|tied)[^)\n]{0,6}\))\s*|(" + CN_NUMERAL + r")、\s*|"
    r"\((?:(\d{1,2})|(" + CN_NUMERAL + r"))\)\s*"
    r"|[-*+•·]\s+)(?=\S)")
# An emoji or symbol used as a bullet (✅ 👉 ▶️ 🔹), then a space; not one that flags a note (⚠️ ❗ 💡 📌).
EMOJI_ITEM = re.compile(r" ?((?![\u26a0\u2757\u2755\u2753\U0001f4a1\U0001f4cc\U0001f4dd])[\u2190-\u2bff\U0001f300-\U0001faff])\ufe0f?\s*(?=[^\s\u2190-\u2bff\U0001f300-\U0001faff])")
HEADING = re.compile(r"^(#{1,6})\s+(?=\S)")
# What numbers the option of a heading: "1.", "1️⃣", "一、", "(一)", "方案二:", "option 2:", "第一名:".
HEADING_NUMBER = re.compile(
    r"(?:\d{1,2}(?:[.)、]|\ufe0f?\u20e3)|" + CN_NUMERAL + r"[、.]|\((?:\d{1,2}|" + CN_NUMERAL + r")\)|"
    r"(?:方案|选项|选择|推荐|option|choice|pick|top|#|no\.?|第)\s*(?:\d{1,2}|" + CN_NUMERAL + r")\s*(?:名|位|个|种|款)?"
    r"\s*[:.、)\-–—]?)\s*")
CN_DIGITS = {c: i for i, c in enumerate("一二三四五六七八九十", start=1)}


def cn_number(numeral: str) -> int:
    """一 to 九十九 as a number."""
    if "十" not in numeral:
        return CN_DIGITS.get(numeral[-1], 0)
    tens, _, units = numeral.partition("十")
    return CN_DIGITS.get(tens, 1) * 10 + CN_DIGITS.get(units, 0)
BOLD_LINE = re.compile(r"^\s*(?:[^\w\s*#|>-]{1,3}\s*)?\*\*([^*\n]{1,80})\*\*\s*[:：]?\s*$")
TABLE_ROW = re.compile(r"^\s*\|.*\|\s*$")
TABLE_SEPARATOR = re.compile(r"^\s*\|?\s*:?-{2,}:?\s*(\|\s*:?-{2,}:?\s*)*\|?\s*$")
# First characters of lines that can start an item (digits, Chinese numerals, markers).
NUMBER_STARTS = frozenset("0123456789一二三四五六七八九十(")
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
    kind: str  # numbered | bullet | table | heading | bold | json
    items: list[Item] = field(default_factory=list)
    last_number: int = 0
    open: bool = True
    intro: tuple[int, int] = (0, 0)  # the span of the line before the structure (a list's lead-in)
    emoji: bool = False  # a list of emoji bullets, which a single line does not make
    numbers: list[int] = field(default_factory=list)  # each item's printed rank, 0 where none is printed

    def add(self, item: Item, number: int = 0) -> None:
        self.items.append(item)
        self.numbers.append(number)

    def ranks(self) -> list[int]:
        """Each item's rank: its position, or the printed number where the answer prints a tie
        ("1（并列）", "1 (tie)", "并列第一"): two items share a number and none goes down."""
        numbers = self.numbers
        tied = any(a == b for a, b in zip(numbers, numbers[1:]))
        if tied and all(numbers) and all(a <= b for a, b in zip(numbers, numbers[1:])):
            return list(numbers)
        return list(range(1, len(self.items) + 1))


def _lead(line: str, offset: int, content_start: int) -> Item:
    """The option an item names: its bold opening, else the text up to the first separator."""
    if line.startswith("**", content_start):
        close = line.find("**", content_start + 2)
        if close > content_start + 2:
            return offset + content_start + 2, offset + close, True
    match = LEAD_END.search(line, content_start)
    end = match.start() if match and match.start() > content_start else len(line)
    return offset + content_start, offset + end, False


RANK_CELL = re.compile(r"^\s*(?:#|no\.?\s*|top\s*)?(\d{1,2})\.?\s*(?:\((?:tie|tied|并列)\))?\s*$")
# A printed place before an item's lead: "并列第一｜**荣耀**", "第三: 小米".
PLACE_PREFIX = re.compile(r"(?:并列)?第\s*(?:(\d{1,2})|(" + CN_NUMERAL + r"))\s*(?:名|位)?\s*[|:]\s*(?=\S)")


def _option_cell(line: str, offset: int) -> tuple[Item, int]:
    """The first cell of a table row, or the next one when the first only holds a rank number
    (returned with it, else 0)."""
    start = line.index("|") + 1
    stop = line.find("|", start)
    number = 0
    if stop == -1:
        stop = len(line)
    else:
        after = line.find("|", stop + 1)
        rank = RANK_CELL.match(line[start:stop]) if after != -1 else None
        if rank:
            start, stop, number = stop + 1, after, int(rank.group(1))
    cell = line[start:stop]
    begin = start + len(cell) - len(cell.lstrip())
    return (offset + begin, offset + start + len(cell.rstrip()), True), number


def find_structures(body: str) -> list[Structure]:
    """Every option structure of the body, in the order they start. One pass over the lines:
    a table row extends the open table and any other line ends it; a heading extends the run
    of its level, closes deeper runs and ends the list and the bold run; a bold line extends
    the bold run and ends the list; an item extends the open list of its kind; a paragraph
    line that is not indented ends the list (a later item continues it only by numbering)."""
    structures: list[Structure] = []
    # The lists being read, by marker ("1." and "1)" are one, 一、, (一), 1️⃣, each bullet
    # emoji and the plain bullets are others): an item extends the list of its marker when
    # that list is open, or continues its numbering.
    lists: dict[str, Structure] = {}
    intro = (0, 0)  # the last non-empty line
    emoji_lists = False
    headings: dict[int, Structure] = {}  # open heading runs by level
    bold: Structure | None = None
    table: Structure | None = None
    table_seen_separator = False
    offset = 0
    for line in body.split("\n"):
        line_offset = offset
        offset += len(line) + 1
        if not line:
            continue
        # Stripped only when it opens with a blank: trailing blanks hold no "**" to look for.
        stripped = line.strip() if line[0].isspace() else line
        if not stripped:
            continue
        previous, intro = intro, (line_offset, offset - 1)
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
                table.add(*_option_cell(line, line_offset))
            continue
        table = None
        if first == "#":
            heading = HEADING.match(line)
            if heading:
                level = len(heading.group(1))
                lists.clear()
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
                headings[level].add(_lead(line, line_offset, number.end() if number else text_start),
                                    _printed_number(number.group()) if number else 0)
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
                bold.add((line_offset + bold_line.start(1), line_offset + bold_line.end(1), True))
                lists.clear()
                continue
            item = first in ITEM_STARTS and LIST_ITEM.match(line)
            if item:
                # The first character decides which branch of LIST_ITEM matched.
                if first in BULLET_STARTS:
                    _add_item(structures, lists, "bullet", "-", 0, line, line_offset, item.end(), previous)
                    continue
                digits, numeral, paren_digits, paren_numeral = item.groups()
                if digits:
                    marker = "1️⃣" if line[item.end(1)] in "\ufe0f\u20e3" else "1."
                    number = int(digits)
                elif numeral:
                    marker, number = "一、", cn_number(numeral)
                else:
                    marker = "(1)" if paren_digits else "(一)"
                    number = int(paren_digits) if paren_digits else cn_number(paren_numeral)
                _add_item(structures, lists, "numbered", marker, number, line, line_offset, item.end(), previous)
                continue
        if first > "\u218f" and not "\u4e00" <= first <= "\u9fff":
            item = EMOJI_ITEM.match(line)
            if item:
                _add_item(structures, lists, "bullet", item.group(1), 0, line, line_offset, item.end(), previous)
                lists[item.group(1)].emoji = emoji_lists = True
                continue
        # A paragraph: it ends the lists, which a later item continues only by numbering.
        if lists and not line.startswith((" ", "\t")):
            for open_list in lists.values():
                open_list.open = False
    if emoji_lists:  # a single emoji line is a note ("✅ 已通过认证"), not a list
        structures = [s for s in structures if not s.emoji or len(s.items) > 1]
    if "```" in body:
        listed, _ = json_option_lists(body)
        if listed:
            structures.append(Structure("json", listed.items, numbers=listed.ranks))
            structures.sort(key=_first_start)  # stable: a JSON block's lines make no other structure
    return structures


def _first_start(structure: Structure) -> int:
    return structure.items[0][0] if structure.items else structure.intro[0]


def _add_item(structures: list[Structure], lists: dict[str, Structure], kind: str, marker: str, number: int,
              line: str, line_offset: int, content_start: int, previous: tuple[int, int]) -> None:
    """An item extends the list of its marker when that list is open or the item continues its
    numbering, and ends the lists of other markers (which only numbering continues then)."""
    current = lists.get(marker)
    if current is None or not (current.open or (number and number == current.last_number + 1)):
        current = lists[marker] = Structure(kind, intro=previous)
        structures.append(current)
    for other in lists.values():
        other.open = False
    current.open = True
    current.last_number = number
    place = PLACE_PREFIX.match(line, content_start)
    if place:
        content_start, number = place.end(), int(place.group(1)) if place.group(1) else cn_number(place.group(2))
    current.add(_lead(line, line_offset, content_start), number)


def _printed_number(numbering: str) -> int:
    """The number a heading prints before its lead ("1.", "一、", "方案二:"), 0 for none."""
    digits = re.search(r"\d{1,2}", numbering)
    if digits:
        return int(digits.group())
    numeral = re.search(CN_NUMERAL, numbering)
    return cn_number(numeral.group()) if numeral else 0
