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
OTHER_MEANING = ("exclude_context:", COMMON_WORD)
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
    candidates = [h for h in accepted if _capitalised(h.alias)]
    if not candidates:
        return accepted
    spans = normalized.original_spans(candidates)
    rejected = set()
    for hit, (start, end) in zip(candidates, spans, strict=True):
        written = normalized.original[start:end]
        if written.islower():
            hit.rule = COMMON_WORD
            rejected.add(id(hit))
    return [h for h in accepted if id(h) not in rejected] if rejected else accepted


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
