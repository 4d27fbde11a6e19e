"""Named but not known: an answer that names a brand only to say it knows nothing about it or
found nothing ("我没有找到关于X的可靠信息", "I couldn't find information on X"). The brand is
mentioned (the answer did name it, and a brand team wants to know) but never recommended, and
it has no tone: there is no opinion of it to read.

A brand is so when each sentence that names it either says, of that brand, that nothing is
known or found, or only frames the brand (an echo of the question: "关于X：", "X怎么样？"),
and at least one says the former. The statement must be about the brand itself: in the
sentence, each of its names is replaced by @ and every other brand's by #, and the patterns
read @ in the statement's place ("没有找到关于@的可靠信息"), so that "no price information
for X" or "nothing found on Y, while X ..." never counts.

The body is NFKC-normalized and lower-cased (clean/text.py): ASCII punctuation but for 。.
"""

from __future__ import annotations

import re
from bisect import bisect_left

SENTENCE_END = re.compile(r"[。!?;\n]|\.(?:\s|$)")
BRAND, OTHER = "@", "#"
# Words that may stand between a statement and the brand, never another brand or a sentence end.
GAP = r"[^@#。!?;\n]{0,%d}?"
# What an answer found nothing of: the information itself, not a detail of it ("价格信息").
INFO = r"(?:信息|資訊|资讯|资料|資料|数据|數據|记录|記錄|纪录|紀錄|介绍|介紹|报道|報導|消息|内容|內容|结果|結果)"
INFO_KIND = r"(?:可靠|可信|相关|相關|公开|公開|确切|確切|具体|具體|权威|權威|任何|有效|官方|详细|詳細|足够|足夠|更多)"
FOUND = r"(?:找到|查到|检索到|檢索到|搜到|搜索到|搜尋到|查询到|查詢到|获取到|獲取到|获得|獲得)"
NOT = r"(?:没有|沒有|没|沒|未能|未|无法|無法|不能|没能|沒能)"
FOUND_NOTHING = r"(?:" + NOT + FOUND + r"|找不到|查不到|搜不到|检索不到|檢索不到|查无|查無)"
UNFAMILIAR = r"(?:不太|不是很|并不|並不|不怎么|不怎麼|不)(?:了解|熟悉|清楚|认识|認識|确定|確定)"
EN_INFO = r"(?:information|info|details|data|records?|results|anything|much)"
EN_INFO_KIND = r"(?:(?:any|reliable|verifiable|credible|public|publicly available|specific|solid|trustworthy|further|more)\s+)*"
EN_NOT_FOUND = (r"(?:couldn't|could not|can't|cannot|can not|wasn't able to|was not able to|am unable to|was unable to"
                r"|unable to|did not|didn't|failed to|haven't been able to|have not been able to)\s+"
                r"(?:find|locate|verify|confirm|identify|turn up)")
ABOUT = r"(?:关于|關於|有关|有關|对于|對於|针对|針對)"
EN_ABOUT = r"(?:on|about|for|regarding|concerning|related to)"

UNKNOWN_STATEMENTS = [re.compile(pattern) for pattern in (
    # 没有找到关于@的可靠信息 / 未能检索到@的相关资料 / 找不到@
    FOUND_NOTHING + GAP % 6 + ABOUT + r"?\s*[\"“「『《]?@",
    # 关于@，我没有找到可靠的信息 / @的资料我查不到 / @：暂未找到公开资料
    r"@" + GAP % 24 + FOUND_NOTHING,
    # 没有关于@的可靠信息 / 暂无@的相关资料
    r"(?:没有|沒有|暂无|暫無|尚无|尚無|缺乏|缺少)" + ABOUT + r"?\s*[\"“「『《]?@[\"”」』》]?\s*(?:的)?" + INFO_KIND + r"?(?:的)?"
    + INFO,
    # 关于@，我目前没有可靠的资料 / 你提到的@，我暂无相关信息
    r"@" + GAP % 16 + r"(?:没有|沒有|暂无|暫無|尚无|尚無|缺乏|缺少)" + INFO_KIND + r"?(?:的)?" + INFO,
    # 搜索了“@ 海外游戏服务器”，没有返回相关结果
    r"@" + GAP % 24 + r"(?:没有|沒有|未)(?:返回|搜到|得到|找到)" + INFO_KIND + r"?(?:的)?" + INFO,
    # @可能是较新的品牌，在我的知识截止日期之前没有相关资料
    r"@" + GAP % 12 + r"(?:较新|比较新|新成立|新推出|新兴|新興|知识截止|知識截止)" + GAP % 24
    + r"(?:没有|沒有|暂无|暫無|不包含)" + INFO_KIND + r"?(?:的)?" + INFO,
    # @和#我都查不到可靠的资料: each of brands named together
    r"@(?:\s*(?:和|与|與|、|及|以及|跟|还有|還有)\s*#)+" + GAP % 12 + FOUND_NOTHING,
    # @的(相关)信息(很少|不多|有限) is partial; only "none at all" counts: @没有(任何)公开资料
    r"@[\"”」』》]?\s*(?:的)?(?:没有|沒有|暂无|暫無|尚无|尚無)" + INFO_KIND + r"?(?:的)?" + INFO,
    # 我对@不太了解 / 关于@我并不熟悉 / 我不了解@ / 没听说过@ / 不知道@是什么
    r"@" + GAP % 8 + UNFAMILIAR,
    UNFAMILIAR + r"\s*[\"“「『《]?@",
    r"(?:没有|沒有|没|沒|从未|從未)(?:听说过|聽說過|听过|聽過|接触过|接觸過)\s*[\"“「『《]?@",
    r"(?:不知道|不清楚|无法确认|無法確認|无法核实|無法核實)\s*[\"“「『《]?@(?:是什么|是什麼|是谁|是誰|是否存在|是哪)?",
    # I couldn't find (any reliable) information on @ / I was unable to verify @
    EN_NOT_FOUND + r"\s+(?:" + EN_INFO_KIND + EN_INFO + r"\s+" + EN_ABOUT + r"\s+)?(?:a |an |the )?[\"“']?@",
    # as for @, I couldn't find anything / @: I could not find any reliable information
    r"@" + GAP % 40 + EN_NOT_FOUND,
    # as for @, I'm not aware of such a provider / @: I don't have any information on it
    r"@" + GAP % 40 + r"(?:(?:i'm|i am) not (?:aware|familiar)|i (?:don't|do not) (?:know|have (?:any )?"
    + EN_INFO_KIND + EN_INFO + r"))",
    # no reliable information about @ / I don't have any information on @ / I have no data on @
    r"(?:\bno|\bnot any|don't have|do not have|have no|lack)\s+" + EN_INFO_KIND + EN_INFO + r"\s+" + EN_ABOUT
    + r"\s+(?:a |an |the )?[\"“']?@",
    r"@[\"”']?\s+(?:is|isn't|is not)\s+(?:not\s+)?(?:something|a (?:brand|company|product|name)) i(?:'m| am)?\s+"
    r"(?:don't |do not |can't |cannot )?(?:know|recogni[sz]e|familiar with|aware of|have information (?:on|about))",
    r"(?:i'm|i am|i'm)\s+not\s+(?:aware of|familiar with)\s+(?:a |an |any |the )?(?:\w+\s+){0,2}?(?:called\s+|named\s+)?[\"“']?@",
    r"(?:never heard of|have no knowledge of|no record of|don't know (?:anything |much )?about|do not know (?:anything |much )?about)"
    r"\s+(?:a |an |the )?[\"“']?@",
    # I ran a web search for @, but it returned nothing I could rely on
    r"search(?:ed)?\s+(?:for|on)\s+(?:a |an |the )?[\"“']?@" + GAP % 30 + r"(?:returned|turned up|found|came back with)\s+"
    r"(?:nothing|no\s)",
    # my search returned no reviews or specs for the @
    r"(?:returned|turned up|found)\s+(?:nothing|no\s)[^@#.!?;\n]{0,40}?\b(?:for|on|about)\s+(?:a |an |the )?[\"“']?@",
)]
# What goes on to say something of it after all ("我没有X最新的价格，但X的产品线……"): not unknown.
CONTRAST = re.compile(r"但|不过|不過|可是|然而|\bbut\b|\bhowever\b|\bthough\b|\balthough\b")

_UNFAMILIAR_WORDS = ("了解", "熟悉", "清楚", "认识", "認識", "确定", "確定")
# Words of which every statement above holds one: the analyzer's one Aho-Corasick pass over the
# answer locates them (with the aliases and the sentiment cues), and only a sentence holding one
# is read with the statements. Most answers hold none and cost nothing more. Wider than the
# statements ("data", "没有"): a sentence they let through is still read with the statements.
TRIGGERS = tuple(dict.fromkeys((
    # FOUND_NOTHING: its verb, or its negated forms
    "找到", "查到", "检索到", "檢索到", "搜到", "搜索到", "搜尋到", "查询到", "查詢到", "获取到", "獲取到", "获得", "獲得",
    "找不到", "查不到", "搜不到", "检索不到", "檢索不到", "查无", "查無",
    # no information: the word that says there is none
    "没有", "沒有", "暂无", "暫無", "尚无", "尚無", "缺乏", "缺少",
    # UNFAMILIAR, each form whole
    *(negation + word for negation in ("不", "不太", "不是很", "不怎么", "不怎麼") for word in _UNFAMILIAR_WORDS),
    "听说过", "聽說過", "听过", "聽過", "接触过", "接觸過",
    "不知道", "不清楚", "无法确认", "無法確認", "无法核实", "無法核實",
    # EN_NOT_FOUND's verbs; the English statements' fixed phrases; EN_INFO's words
    "find", "locate", "verify", "confirm", "identify", "turn up",
    "not aware", "not familiar", "don't know", "do not know", "don't have", "do not have",
    "info", "details", "data", "record", "results", "anything", "much",
    "something i", "a brand i", "a company i", "a product i", "a name i",
    "aware of", "familiar with", "never heard of", "have no knowledge of", "no record of",
    "know about", "know anything about", "know much about",
    "returned nothing", "returned no", "turned up nothing", "turned up no", "found nothing",
)))


# A sentence that only frames the brand: a heading or an echo of the question.
ECHO_MAX_CHARS = 60
ECHO = re.compile(r"^[\s\W_]*(?:关于|關於|有关|有關|对于|對於|about|regarding|re|as for|您问的是|你问的是|您問的是|你問的是"
                  r"|您提到的|你提到的|you asked about|you mentioned)?[\s\W_]*@[\s\W_]*"
                  r"(?:是什么|是什麼|是谁|是誰|怎么样|怎麼樣|好不好|如何|呢)?[\s\W_]*$"
                  # a question back: 你说的“@”是不是指@？
                  r"|^[\s\W_]*(?:你说的|您说的|你說的|您說的|你指的|您指的)[\s\W_]*@[\s\W_]*(?:是不是指|是指|指的是|是不是)"
                  r"[\s\W_]*@?[\s\W_]*(?:吗|嗎|呢)?[\s\W_]*$")
# What the sentence after an echo may call the brand by: "这个产品我检索不到任何可用的资料".
PRONOUN = re.compile(r"这个产品|這個產品|这款产品|這款產品|该产品|該產品|这家公司|這家公司|它|this product|\bit\b")


def named_unknown_brands(body: str, mentions: dict[str, list[tuple[int, int]]], triggers: list[int]) -> set[str]:
    """The brands of `mentions` (each brand's accepted hits, (start, end) in `body`) that the
    answer names only to say it knows nothing about them or found nothing. triggers: where the
    body holds one of TRIGGERS, in order (the analyzer's pass finds them)."""
    if not triggers:
        return set()
    candidates = [brand for brand, spans in mentions.items() if _shares_a_sentence(body, spans, triggers)]
    if not candidates:
        return set()
    ends = [match.start() for match in SENTENCE_END.finditer(body)]
    cued: dict[tuple[int, int], bool] = {}  # each sentence: whether it holds a cue (most do not)
    found = set()
    for brand in candidates:
        spans = mentions[brand]
        stated = False
        sentences = {_sentence_bounds(body, ends, start) for start, _ in spans}
        for sentence in sentences:
            if sentence not in cued:
                cued[sentence] = _holds(triggers, *sentence)
            if not cued[sentence] and sentence[1] - sentence[0] > ECHO_MAX_CHARS:
                break  # says no such thing and is too long to be a mere echo of the question
            text = _marked(body, sentence, brand, mentions)
            if cued[sentence] and _states_unknown(text):
                stated = True
            elif not ECHO.match(text):
                break
        else:
            if stated or _said_of_it_next(body, ends, max(sentences), brand, mentions):
                found.add(brand)
    return found


def _said_of_it_next(body: str, ends: list[int], last: tuple[int, int], brand: str, mentions) -> bool:
    """Every sentence naming the brand only frames it, and the next one says of "it" that nothing
    is known ("你说的“石墨”是不是指石墨文档？这个产品我检索不到任何可用的资料")."""
    if last[1] >= len(body):
        return False
    following = _sentence_bounds(body, ends, last[1] + 1)
    text = PRONOUN.sub(BRAND, _marked(body, following, brand, mentions), count=1)
    return BRAND in text and _states_unknown(text)


def _shares_a_sentence(body: str, spans: list[tuple[int, int]], triggers: list[int]) -> bool:
    """Whether a trigger sits in the sentence of one of the spans, or in the sentence after it
    (which may say of "it" that nothing is known): at most one sentence end lies between the span
    and the nearest trigger after it, none between it and the nearest before. (Cheaper than
    finding every sentence of an answer, which most answers with a trigger word never need.)"""
    for start, _ in spans:
        index = bisect_left(triggers, start)
        for trigger in triggers[max(index - 1, 0):index + 1]:
            low, high = min(start, trigger), max(start, trigger)
            # One past the later one: a "." right before it is an end only when a space follows.
            ends = SENTENCE_END.finditer(body, low, high + 1)
            if next(ends, None) is None or (trigger > start and next(ends, None) is None):
                return True
    return False


def _holds(positions: list[int], start: int, end: int) -> bool:
    index = bisect_left(positions, start)
    return index < len(positions) and positions[index] < end


def _states_unknown(sentence: str) -> bool:
    """The sentence says of the brand (@) that nothing is known or found, and goes on to say nothing of it."""
    for pattern in UNKNOWN_STATEMENTS:
        match = pattern.search(sentence)
        if match and not CONTRAST.search(sentence, match.end()):
            return True
    return False


def _sentence_bounds(body: str, ends: list[int], position: int) -> tuple[int, int]:
    """The sentence around `position`, between the sentence ends (`ends`: their starts, sorted)."""
    index = bisect_left(ends, position)
    start = ends[index - 1] + 1 if index else 0
    return start, ends[index] if index < len(ends) else len(body)


def _marked(body: str, bounds: tuple[int, int], brand: str, mentions: dict[str, list[tuple[int, int]]]) -> str:
    """The sentence with each of the brand's names replaced by @, every other brand's by #."""
    low, high = bounds
    spans = sorted((start, end, BRAND if name == brand else OTHER) for name, hits in mentions.items()
                   for start, end in hits if low <= start < high)
    parts, at = [], low
    for start, end, mark in spans:
        if start >= at:
            parts += [body[at:start], mark]
            at = end
    parts.append(body[at:high])
    return "".join(parts)
