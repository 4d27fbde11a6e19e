"""Names an answer offers as options that no alias of the catalog matches (README, "Discovery").

They come from the items of the answer's primary option list (the structure whose items name a
tracked brand, so its items are alternatives to choose among): the lead of each item that names
no brand of the catalog, when that lead reads as a name and not as a category, a step or a
sentence. Each name is kept as written (NFKC, markdown removed), with the form the answer gives
it in parentheses right after ("字节跳动 (ByteDance)"), and a key that groups the spellings of
one name (case, width, spaces and punctuation).
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass

from visibility_assets.clean.matcher import AliasHit
from visibility_assets.clean.structure import SECTION_TITLE, Structure
from visibility_assets.clean.text import NormalizedText
from visibility_assets.core.chinese_script import to_simplified


@dataclass(frozen=True, slots=True)
class UntrackedName:
    name: str  # as written
    key: str  # the grouping key of the name (untracked_key)
    list_rank: int  # the item's position in the option list
    other_form: str | None = None  # the name's other form, given in parentheses after it
    other_key: str | None = None


MAX_NAME_CHARS = 40
MAX_LATIN_WORDS = 4
MAX_CJK_CHARS = 8
CJK = re.compile(r"[\u4e00-\u9fff]")
LATIN = re.compile(r"[A-Za-z]")
MARKDOWN = re.compile(r"[*_`#]+")
# What may open a lead before the name: a number the list's marker did not take, an emoji.
LEADING_MARK = re.compile(r"^(?:\d{1,2}[.)、]|[一二三四五六七八九十]{1,3}、|[^\w\s(（]+)\s*")
# A combination ("Zoom + Google Workspace", "Excel / 在线表格") or a list of names is no one name.
SEVERAL = re.compile(r"\s[+/&]\s|[,，;；、]|\be\.g\.")
KEY_DROPS = re.compile(r"[\s\-_.·・,'’&/]+")
# A plain lead that ends at one of these is a sentence's first clause, not a name.
SENTENCE_ENDS = frozenset(",，。;；")
# The parenthesised form after a name: "(ByteDance)", "（飞书）".
PAREN_FORM = re.compile(r"\s*[(（]([^()（）\n]{1,30})[)）]")
# Words that make a lead a category, a criterion or advice rather than a name.
GENERIC_CJK = re.compile(
    r"^(?:适合|如果|对于|其他|其它|更多|总结|注意|预算|按|选择|推荐|建议|使用|通过|可以|需要|若|想|追求|注重|看重|偏好|"
    r"重视|个人|小团队|中小|大型|企业级|国产|国内|海外|国外|开源|免费|付费|自建|外包|传统|先|再|最后|首先|其次|备选|替代|参考|来源)"
    r"|(?:方案|选择|选项|类|型|厂商|品牌|场景|阶段|步骤|推荐|用户|团队|企业|需求|预算|首选|之选|版|套餐|方式|模式|工具|平台|产品|服务商|开发|资料)$"
    r"|[的是和与或及、最更很]|非常|比较")
GENERIC_LATIN_WORDS = frozenset(
    "other others best budget free open open-source self-hosted enterprise small large for if when option options "
    "alternative alternatives pros cons price pricing cost costs summary note notes tip tips step use choose consider "
    "avoid honorable bonus why how what the a an overall verdict winner runner-up quick key plan tier custom "
    "general premium basic standard pick picks top sources references further reading".split())
NOT_A_NAME = re.compile(r"^[\W\d_]+$|^(?:19|20)\d\d|^[$¥￥€£]|\d+\s*(?:元|/月|/年|%)")


def untracked_key(name: str) -> str:
    """The form two spellings of a name are grouped by: NFKC, case-folded, Traditional read as
    Simplified, without spaces and joining punctuation ("Monday.com" and "monday com" are one)."""
    return KEY_DROPS.sub("", to_simplified(unicodedata.normalize("NFKC", name).casefold()))


def untracked_names(normalized: NormalizedText, body: str, structure: Structure | None,
                    options: list[str | None], hits: list[AliasHit], alias_keys: frozenset[str]) -> list[UntrackedName]:
    """The primary list's items that name no brand of the catalog and read as names, in order.
    hits: every alias hit of the answer, accepted or not (a lead holding one names a brand the
    catalog knows, in this category or another); alias_keys: untracked_key of every alias."""
    if structure is None or all(options):
        return []
    names, seen = [], set()
    for rank, (item, option) in enumerate(zip(structure.items, options), start=1):
        lead_start, lead_end, titled = item
        if option or any(hit.start < lead_end and hit.end > lead_start for hit in hits):
            continue
        if not titled and lead_end < len(body) and body[lead_end] in SENTENCE_ENDS:
            continue
        if body.startswith("[", lead_start):  # a link's title: a list of sources, not of options
            continue
        name, other = _name_and_form(normalized, lead_start, lead_end)
        key = untracked_key(name)
        if key in seen or key in alias_keys or not _reads_as_name(name):
            continue
        seen.add(key)
        other_key = untracked_key(other) if other and _reads_as_name(other) else None
        names.append(UntrackedName(name, key, rank, other if other_key else None, other_key))
    return names


def _name_and_form(normalized: NormalizedText, start: int, end: int) -> tuple[str, str | None]:
    """The lead as written, without markdown, and the parenthesised form inside it (a bold
    "**飞书 (Lark)**") or right after it ("Pipedrive (派德):")."""
    begin, stop = normalized.original_span(start, end)
    lead = unicodedata.normalize("NFKC", normalized.original[begin:stop])
    form = PAREN_FORM.search(lead)
    if form:
        return _clean(lead[:form.start()]), _clean(form.group(1))
    after = PAREN_FORM.match(unicodedata.normalize("NFKC", normalized.original[stop:stop + 40]).replace("**", ""))
    return _clean(lead), (_clean(after.group(1)) if after else None)


def _clean(text: str) -> str:
    return LEADING_MARK.sub("", MARKDOWN.sub("", text).strip(" :：-–—|\t"))


def _reads_as_name(name: str) -> bool:
    """Short, not a number, a date or a price, not a section title, and no generic word: a
    brand or product name ("七牛云", "Pipedrive", "Zoho CRM") rather than "开源方案" or "Best for teams"."""
    if (not 2 <= len(name) <= MAX_NAME_CHARS or NOT_A_NAME.search(name) or SEVERAL.search(name)
            or SECTION_TITLE.match(name)):
        return False
    if CJK.search(name):
        return len(CJK.findall(name)) <= MAX_CJK_CHARS and not GENERIC_CJK.search(name)
    if not LATIN.search(name):
        return False
    words = name.split()
    if len(words) > MAX_LATIN_WORDS or words[0].casefold() in GENERIC_LATIN_WORDS:
        return False
    # A name has a capital or a digit somewhere ("HubSpot", "n8n"), or is a domain ("monday.com");
    # a lower-case word after the first makes it a description ("Managed WordPress hosting").
    if any(len(word) > 3 and word.isalpha() and word.islower() for word in words[1:]):
        return False
    return any(c.isupper() or c.isdigit() for c in name) or "." in name
