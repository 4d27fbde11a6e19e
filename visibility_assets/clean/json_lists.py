"""Option lists an answer gives as JSON in a code block: an array of names or of objects with a
name (`[{"rank": 1, "name": "Google Cloud"}, …]`, `["特斯拉 Model Y", …]`), or an object holding
a ranking array and a not-recommended one (`{"recommended": […], "not_recommended": […]}`).
Each element is an item, in array order; its lead is the name's span in the text."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass

CODE_BLOCK = re.compile(r"```[a-z]*[ \t]*\n(.*?)```", re.S)
# Keys of the object that hold the ranked options, and the ones that hold the options to avoid.
PRIMARY_KEYS = ("recommended", "recommendations", "ranking", "rankings", "ranked", "options", "top", "top_picks",
                "picks", "shortlist", "results", "brands", "products", "list", "推荐", "排名")
AVOID_KEYS = re.compile(r"^(?:not[_ ]?recommended|avoid|avoided|skip|excluded|不推荐|不建议|避坑)$")
NAME_KEYS = ("name", "model", "brand", "product", "vendor", "provider", "option", "title", "名称", "品牌", "型号")
MAX_BLOCK = 20_000


@dataclass(slots=True)
class JsonList:
    items: list[tuple[int, int, bool]]  # each element's name span in the body, as structure.Item
    ranks: list[int]  # each element's printed "rank", 0 where it has none


def json_option_lists(body: str) -> tuple[JsonList | None, list[tuple[int, int]]]:
    """The first JSON option list of the body, and the name spans of its options to avoid."""
    for block in CODE_BLOCK.finditer(body):
        source = block.group(1)
        if len(source) > MAX_BLOCK or source.lstrip()[:1] not in ("[", "{"):
            continue
        try:
            value = json.loads(source)
        except ValueError:
            continue
        primary, avoided = _arrays(value)
        if primary is None and not avoided:
            continue
        cursor = _Cursor(body, block.start(1), block.end(1))
        found = JsonList([], [])
        for element in primary or ():
            name, rank = _name_and_rank(element)
            span = cursor.find(name) if name else None
            if span:
                found.items.append((*span, True))
                found.ranks.append(rank)
        avoided_spans = [span for span in (cursor.find(_name_and_rank(element)[0] or "") for element in avoided)
                         if span]
        return (found if found.items else None), avoided_spans
    return None, []


def _arrays(value) -> tuple[list | None, list]:
    if isinstance(value, list):
        return value, []
    if not isinstance(value, dict):
        return None, []
    primary = next((value[key] for key in PRIMARY_KEYS if isinstance(value.get(key), list)), None)
    if primary is None:
        primary = next((v for k, v in value.items() if isinstance(v, list) and not AVOID_KEYS.match(k)), None)
    avoided = [e for k, v in value.items() if isinstance(v, list) and AVOID_KEYS.match(k) for e in v]
    return primary, avoided


def _name_and_rank(element) -> tuple[str | None, int]:
    if isinstance(element, str):
        return element, 0
    if not isinstance(element, dict):
        return None, 0
    name = next((element[key] for key in NAME_KEYS if isinstance(element.get(key), str)), None)
    rank = element.get("rank")
    return name, rank if isinstance(rank, int) and not isinstance(rank, bool) and 0 < rank < 100 else 0


class _Cursor:
    """Finds each name as a JSON string in the block, after the previous one found."""

    def __init__(self, body: str, start: int, end: int):
        self.body, self.position, self.end = body, start, end

    def find(self, name: str) -> tuple[int, int] | None:
        if not name:
            return None
        quoted = json.dumps(name, ensure_ascii=False)
        at = self.body.find(quoted, self.position, self.end)
        if at == -1:
            return None
        self.position = at + len(quoted)
        return at + 1, at + len(quoted) - 1
