"""Which meaning of a brand's name an answer uses.

Many brand names are also words: salesforce (a sales team), azure (a colour), 苹果 (the fruit),
三星 (the three stars of longevity), AWS (the American Welding Society). exclude_contexts name
the other meanings a brand is known to have; two rules here reach further:

- a capitalised Latin name written all in lower case ("a salesforce of five reps", "carriers
  honor it") is the common word: assistants write brand names as the brand does;
- an answer about another meaning is off topic even when the question asked about the brand:
  its brand words were all set aside as other meanings; or it names only brands known to have
  other meanings (brands.yaml gives them exclude_contexts), shows one of those meanings (a use
  set aside, or an exclude_context's word anywhere) and uses no word of products at all.
"""

from __future__ import annotations

import re
from functools import lru_cache

from visibility_assets.clean.matcher import AliasHit
from visibility_assets.clean.text import NormalizedText

COMMON_WORD = "common_word:lowercase"
# A name after a language's own namespace is that library's word: java.nio is Java's New I/O, not NIO.
LANGUAGE_NAMESPACE = "code:language_namespace"
OTHER_MEANING = ("exclude_context:", COMMON_WORD, LANGUAGE_NAMESPACE)
NAMESPACE_BEFORE = re.compile(r"(?<![\w.])(?:java|javax|jdk|android|androidx|kotlin|kotlinx|scala|std|system)\.$")
# What joins the parts of an identifier: com.xiaomi.account, lark_oapi, hubspot-api-client, a/b.
JOINERS = frozenset("._-/")
FENCE = "```"
# Long enough to be about something: a short answer may name a brand and nothing else.
MIN_ANSWER_FOR_SENSE = 200

CAPITALISED_WORD = re.compile(r"[A-Z][a-z]+(?: [A-Za-z]+)*")
# Words that only an answer about products, software or services uses, in any category (kept
# off it: words that any advice uses, such as 推荐, 选择, 价格, product, choose).
PRODUCT_WORDS = re.compile(
    r"型号|机型|旗舰|官网|售后|系统|版本|功能|配置|手机|电脑|平板|屏幕|芯片|处理器|续航|拍照|影像|"
    r"云服务|服务器|部署|数据库|算力|实例|企业版|私有化|客户管理|线索|商机|软件|应用|平台|车型|电车|电动|新能源|"
    r"智驾|辅助驾驶|充电|办公|协作|文档|笔记|会议|订阅|套餐|定价|报价|开发者|接口|集成|数据|产品线|saas|crm|"
    r"\b(?:device|phone|smartphone|laptop|flagship|software|app|apps|platform|cloud|server|servers|hosting|"
    r"database|deploy\w*|api|sdk|integrations?|subscriptions?|pricing|plans?|licen[cs]es?|vehicle|cars?|ev|"
    r"charging|battery|chip|camera|display|workspace|docs|notes|meetings?|enterprise|features?|pipeline|"
    r"dashboards?|users?|seats?|vendors?|specs|ecosystem|retail|after-sales|developers?|smartphones?)\b",
    re.IGNORECASE,
)


def set_aside_common_words(accepted: list[AliasHit], normalized: NormalizedText) -> list[AliasHit]:
    """The accepted hits without the lower-case uses of capitalised names (each rejected with
    COMMON_WORD, so entity_matches says why)."""
    text = normalized.text
    rejected = set()
    for hit in accepted:
        if hit.start > 0 and text[hit.start - 1] == "." and NAMESPACE_BEFORE.search(
                text, max(0, hit.start - 12), hit.start):
            hit.rule = LANGUAGE_NAMESPACE
            rejected.add(id(hit))
    candidates = [h for h in accepted if _capitalised(h.alias) and id(h) not in rejected]
    spans = normalized.original_spans(candidates) if candidates else ()
    for hit, (start, end) in zip(candidates, spans, strict=True):
        written = normalized.original[start:end]
        if written.islower() and not _in_code(normalized.original, start, end):
            hit.rule = COMMON_WORD
            rejected.add(id(hit))
    return [h for h in accepted if id(h) not in rejected] if rejected else accepted


def _in_code(original: str, start: int, end: int) -> bool:
    """The name is part of an identifier (com.xiaomi.account, lark_oapi, simple-salesforce), or
    stands in a code block or a command (`grep xiaomi`): code writes names in lower case. A bare
    word in backticks (`lark`) is only a name, whose meaning code does not settle."""
    before, after = original[start - 2:start] if start >= 2 else "", original[end:end + 2]
    if (len(before) == 2 and before[1] in JOINERS and before[0].isalnum()) or (
            len(after) == 2 and after[0] in JOINERS and after[1].isalnum()):
        return True
    if original.count(FENCE, 0, start) % 2 == 1:
        return True
    line_start = original.rfind("\n", 0, start) + 1
    line_end = original.find("\n", end)
    line = original[line_start:len(original) if line_end == -1 else line_end]
    opened = line.count("`", 0, start - line_start)
    if opened % 2 == 0:
        return False
    span_start = line.rfind("`", 0, start - line_start)
    span_end = line.find("`", end - line_start)
    return span_end != -1 and line[span_start + 1:span_end].strip() != original[start:end]


@lru_cache(maxsize=65536)  # a catalog's aliases, over and over
def _capitalised(alias: str) -> bool:
    return CAPITALISED_WORD.fullmatch(alias) is not None


def about_another_meaning(body: str, question: str, hits: list[AliasHit], accepted: list[AliasHit],
                          other_meanings: dict[str, tuple[str, ...]]) -> bool:
    """The answer is about another meaning of the brand names it uses (see the module's doc).
    other_meanings: the brands with exclude_contexts, each with those that do not contain an
    alias (the other meaning's own words: 水果, millet)."""
    if not accepted:
        folded = question.casefold()
        return any(h.rule.startswith(OTHER_MEANING) and h.alias.casefold() in folded for h in hits)
    # Most answers stop here: a brand without known other meanings, or a short answer.
    if len(body) < MIN_ANSWER_FOR_SENSE or any(h.brand not in other_meanings for h in accepted):
        return False
    shown = any(h.rule.startswith(OTHER_MEANING) for h in hits) or any(
        word in body for h in accepted for word in other_meanings[h.brand])
    return shown and PRODUCT_WORDS.search(body) is None
