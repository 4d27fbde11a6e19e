"""Traditional Chinese read as Simplified, one character to one (positions do not move).

The catalog's aliases are Simplified and a user writes each once; an answer in Traditional
(華為, 阿里雲, 飛書) names the same brands. Only characters that GB2312 lacks are folded, so a
Simplified text is never changed, and 於, which GB2312 keeps only as a surname
(scripts/make_traditional_table.py makes the table; core/data/traditional_chars.txt says where it is from).
"""

from __future__ import annotations

import re
from functools import cache
from importlib.resources import files


@cache
def _table() -> tuple[dict[int, str], re.Pattern]:
    lines = files("visibility_assets.core").joinpath("data/traditional_chars.txt").read_text(encoding="utf-8")
    pairs = [line for line in lines.splitlines() if line and not line.startswith("#")]
    table = {ord(pair[0]): pair[1] for pair in pairs}
    return table, re.compile("[" + "".join(pair[0] for pair in pairs) + "]")


def to_simplified(text: str) -> str:
    """The text with its Traditional characters folded to Simplified ones (the same length)."""
    table, traditional = _table()
    return text.translate(table) if traditional.search(text) else text
