"""How an answer speaks of each brand it names: positive, neutral or negative, with its cue words.

Judged from the brand's context: the sentences that name it, and when it names an option (a
list item, a heading, a bold line), that option's block down to the next option. Cues come
from a lexicon of Chinese and English evaluative words; a negator just before a cue turns it
(不稳定, not reliable, 没有明显短板); after a contrast (但, 不过, however, but) the clause weighs
more than before it; a comparison (A 比 B 更稳定, A is faster than B) turns the cue for the brand
after 比/than. Advice against the brand counts as a strong negative cue. A brand is positive or
negative when that side outweighs the other at least twice; praised and criticised alike, it is
neutral (a pros-and-cons answer is not simply positive).

Lexicon and rules rather than a model: nothing to download, explainable cues, and fast (the
analyzer runs at thousands of answers per second). tools/bench/sentiment_compare.py measures it
against a small packaged model on the labelled set in tests/eval.
"""

from __future__ import annotations

import re
from bisect import bisect_left
from dataclasses import dataclass

from ahocorasick_rs import AhoCorasick, MatchKind

POSITIVE, NEUTRAL, NEGATIVE = "positive", "neutral", "negative"

POSITIVE_WORDS = (
    # zh: quality, value, recommendation
    "推荐", "首选", "值得", "优秀", "出色", "强大", "领先", "稳定", "可靠", "成熟", "完善", "丰富", "灵活", "便宜", "实惠",
    "性价比高", "高性价比", "性价比突出", "好用", "易用", "简单易用", "上手快", "流畅", "快速", "高效", "安全", "口碑好",
    "口碑不错", "好评", "靠谱", "不错", "很好", "最好", "优势", "亮点", "突出", "卓越", "全面", "领先地位", "表现好",
    "表现出色", "表现优异", "表现稳定", "体验好", "体验佳", "满意", "强劲", "顶尖", "一流", "省心", "贴心",
    "划算", "友好", "专业", "扎实", "可圈可点", "信赖", "广受欢迎", "受欢迎", "最佳", "优质", "出众", "加分",
    # comparatives and advice that favour a brand
    "更合适", "更好", "好得多", "更强", "最强", "顶级", "建议选", "建议用", "建议选择", "优先选", "优先考虑", "首推",
    "稳得多", "更稳", "有竞争力", "更有竞争力", "竞争力强", "更胜一筹", "胜出", "占优", "完胜", "值得入手", "值得购买",
    "做得好", "出彩", "领先一步",
    # en
    "recommend", "recommended", "best", "excellent", "great", "good", "strong", "reliable", "stable", "robust",
    "mature", "powerful", "leading", "leader", "affordable", "cheap", "cost-effective", "value for money",
    "easy to use", "user-friendly", "intuitive", "fast", "efficient", "secure", "popular", "well-regarded",
    "solid", "impressive", "outstanding", "top choice", "top pick", "standout", "flexible", "seamless", "polished", "praised",
    "worth", "ideal", "love", "favorite", "favourite", "comprehensive", "smooth", "generous",
    "better", "winner", "clear winner", "the edge", "strongest", "superior", "best-in-class", "class-leading",
    "stands out", "comfortable", "premium", "go with",
)
NEGATIVE_WORDS = (
    # zh: faults, cost, risk, advice against
    "不推荐", "不建议", "避免", "慎选", "慎用", "缺点", "短板", "不足", "劣势", "问题较多", "存在问题", "故障", "卡顿",
    "发热", "昂贵", "偏贵", "偏高", "较贵", "太贵", "价格高", "复杂", "难用", "落后", "不稳定", "宕机", "较差", "很差",
    "差劲", "表现一般", "体验一般", "一般般", "欠缺", "缺乏", "有限", "局限", "吐槽", "投诉", "风险较高", "有风险",
    "隐患", "担忧", "下滑", "收费高", "门槛高", "学习成本", "臃肿",
    "繁琐", "割裂", "拖沓", "慢", "迟缓", "失望", "糟糕", "争议", "负面", "不佳", "不足之处", "诟病", "被诟病", "槽点",
    "掉线", "漏洞", "泄露", "不够", "平庸", "鸡肋",
    # en
    "avoid", "skip", "steer clear", "expensive", "pricey", "costly", "overpriced", "complex", "complicated",
    "clunky", "slow", "buggy", "unstable", "unreliable", "outage", "outages", "downtime", "weak", "weakness",
    "drawback", "drawbacks", "downside", "downsides", "con", "cons", "limited", "lacking", "lacks", "poor",
    "bad", "worse", "worst", "disappointing", "frustrating", "confusing", "steep", "bloated", "criticized",
    "criticised", "complaints", "issues", "problems", "risk", "risky", "concern", "concerns", "lag", "laggy",
    "mediocre", "dated", "clumsy", "hard to",
)
# Words that turn the cue right after them (zh within a few characters, en within a few words).
NEGATORS_ZH = ("不", "没", "没有", "并不", "并非", "不太", "不算", "不够", "未", "无", "毫无", "缺少", "谈不上")
NEGATORS_EN = ("not", "no", "never", "isn't", "aren't", "wasn't", "doesn't", "don't", "didn't", "hardly",
               "without", "lack", "lacks", "nor", "n't")
NOT_NEGATORS_ZH = ("不仅", "不但", "不只", "不光", "不管", "不论", "无论", "无疑", "不得不", "不可或缺")
NOT_ONLY_EN = re.compile(r"\bnot only\b|\bno doubt\b|\bno wonder\b")
CONTRAST = re.compile(r"但是|但|不过|然而|可惜|只是|\bhowever\b|\bbut\b|\balthough\b|\bthough\b|\byet\b|\bwhile\b")
# A comparison puts the cue on one side: "A 比 B 更稳定", "A is faster than B" (the brand after
# 比/than gets the opposite), "A 不如 B 稳定", "A is not as fast as B" (the brand before it does).
FLIPS_AFTER = re.compile(r"比|\bthan\b")
FLIPS_BEFORE = re.compile(r"不如|比不上|\bnot as\b|\bbehind\b")
FLIPS_ANY = re.compile(FLIPS_AFTER.pattern + "|" + FLIPS_BEFORE.pattern)
SENTENCE_END = re.compile(r"[。！？!?;；\n]|\. ")
CLAUSE_END = re.compile(r"[，,：:]")
CLAUSES = re.compile(r"(?:[^，,：:。！？!?;；\n.]|\.(?!\s))+")
LIST_ITEM = re.compile(r"[ \t]*(?:\d{1,2}[.)、]|[-*+•]\s|[一二三四五六七八九十]+、|（[一二三四五六七八九十]+）)")
# What may stand between an option line's start and the brand it opens with.
OPTION_LABEL = re.compile(r"[\s#>*\-+•\d.)、（）()一二三四五六七八九十【】\[\]|:：]*")
BLOCK_START = re.compile(r"^[ \t]*(?:#{1,6}\s|\d{1,2}[.)、]\s*|[-*+•]\s|\*\*|[一二三四五六七八九十]+、|（[一二三四五六七八九十]+）)",
                         re.M)
BEFORE_CONTRAST, AFTER_CONTRAST = 0.75, 1.25
ADVISED_AGAINST = 2.0  # the analyzer found advice against the brand
DOMINANCE = 2.0  # one side must outweigh the other this many times


@dataclass(frozen=True, slots=True)
class Sentiment:
    label: str
    cues: tuple[str, ...]  # "+推荐", "-偏贵", "-not reliable" …, in order of appearance
    score: float


_WORDS = sorted(set(NEGATIVE_WORDS) | set(POSITIVE_WORDS), key=lambda w: (-len(w), w))
_POSITIVE = frozenset(POSITIVE_WORDS) - frozenset(NEGATIVE_WORDS)
# One pass of Aho-Corasick over the answer finds every cue (a regex alternation of 300 words
# cost more than the rest of the analysis); leftmost-longest keeps 不推荐 over 推荐.
_LEXICON = AhoCorasick(_WORDS, matchkind=MatchKind.LeftmostLongest)
_NEGATORS_EN = frozenset(NEGATORS_EN)


@dataclass(frozen=True, slots=True)
class Cue:
    start: int
    word: str
    positive: bool  # after negation


def find_cues(body: str) -> list[Cue]:
    """Every evaluative word of the answer body, in order, with its polarity after negation; a
    Latin word only where it does not touch another letter."""
    cues = []
    for index, start, end in _LEXICON.find_matches_as_indexes(body):
        word = _WORDS[index]
        if word[0].isascii() and (start > 0 and body[start - 1].isalnum() or end < len(body) and body[end].isalnum()):
            continue
        positive = word in _POSITIVE
        if _negated(body, start, word):
            positive, word = not positive, "not " + word
        cues.append(Cue(start, word, positive))
    return cues


def brand_contexts(body: str, spans: list[tuple[int, int]],
                   others: frozenset[int] = frozenset()) -> list[tuple[int, int, int]]:
    """(context start, context end, the hit's start) for each hit. A hit that names an option (a
    list item, heading or bold line opening with it) takes the option's block, down to the next
    option; another takes its sentence, narrowed to its clause when the sentence names another
    brand too (`others`: the starts of every accepted hit)."""
    contexts = []
    for start, _ in spans:
        line_start = body.rfind("\n", 0, start) + 1
        line_end = body.find("\n", start)
        line_end = len(body) if line_end < 0 else line_end
        if BLOCK_START.match(body, line_start) and OPTION_LABEL.fullmatch(body, line_start, start):
            contexts.append((line_start, _block_end(body, line_start, line_end), start))
            continue
        low = max(line_start, _last_end(body, SENTENCE_END, line_start, start))
        match = SENTENCE_END.search(body, start)
        high = match.end() if match else len(body)
        if any(low <= other < high and other != start for other in others):
            low = max(low, _last_end(body, CLAUSE_END, low, start))
            match = CLAUSE_END.search(body, start, high)
            high = match.end() if match else high
        contexts.append((low, high, start))
    return contexts


def _last_end(body: str, pattern: re.Pattern, low: int, high: int) -> int:
    end = low
    for match in pattern.finditer(body, low, high):
        end = match.end()
    return end


def _block_end(body: str, line_start: int, line_end: int) -> int:
    """The end of the option a line opens. A list item goes on over its indented lines; a
    heading or bold line over the paragraphs below it, to the next option line; at most 600 chars."""
    heading = not LIST_ITEM.match(body, line_start)
    position, limit = line_end, min(len(body), line_end + 600)
    while position < limit:
        next_end = body.find("\n", position + 1)
        next_end = len(body) if next_end < 0 else next_end
        line = body[position + 1:next_end]
        indented = line.startswith((" ", "\t")) and line.strip()
        if not indented and (not heading or BLOCK_START.match(line) or line.startswith("#")):
            if heading and not line.strip():
                position = next_end  # a blank line between a heading and its paragraphs
                continue
            break
        position = next_end
    return min(position, limit)


@dataclass(frozen=True, slots=True)
class BrandSentiment:
    overall: Sentiment  # over every context that names the brand
    mentions: tuple[Sentiment, ...]  # one per hit, from that hit's context


def judge(body: str, cues: list[Cue], spans: list[tuple[int, int]], advised_against: bool = False,
          others: frozenset[int] = frozenset()) -> BrandSentiment:
    """The sentiment of one brand and of each of its mentions, from the contexts of its hits
    in `body` (normalized, lower case) and the body's `cues` (find_cues); `others` are the starts
    of every brand's accepted hits."""
    starts = [cue.start for cue in cues]
    by_context: dict[tuple[int, int], tuple[float, float, list[str]]] = {}
    per_hit = []
    for start, end, _ in brand_contexts(body, spans, others):
        if (start, end) not in by_context:
            inside = cues[bisect_left(starts, start):bisect_left(starts, end)]
            by_context[(start, end)] = _score(body[start:end], start, inside,
                                              [s - start for s, _ in spans if start <= s < end])
        per_hit.append(by_context[(start, end)])
    score_pos = sum(p for p, _, _ in by_context.values())
    score_neg = sum(n for _, n, _ in by_context.values())
    cues = [cue for _, _, found in by_context.values() for cue in found]
    if advised_against:
        score_neg += ADVISED_AGAINST
        cues.append("-advised against")
    mentions = tuple(Sentiment(_label(p, n), tuple(dict.fromkeys(c)), round(p - n, 3)) for p, n, c in per_hit)
    overall = Sentiment(_label(score_pos, score_neg), tuple(dict.fromkeys(cues)), round(score_pos - score_neg, 3))
    return BrandSentiment(overall, mentions)


def _score(text: str, offset: int, cues: list[Cue], hits: list[int]) -> tuple[float, float, list[str]]:
    """Positive and negative weight of one context (`offset` into the body) and its cues; `hits`
    are the brand's offsets in it."""
    score_pos = score_neg = 0.0
    found: list[str] = []
    if not cues:
        return score_pos, score_neg, found
    contrast = CONTRAST.search(text)
    turn_after = contrast.end() + offset if contrast else None
    # Most contexts compare nothing: then no clause needs looking at.
    clauses = CLAUSES.finditer(text) if FLIPS_ANY.search(text) else ((0, len(text), False),)
    for clause in clauses:
        if isinstance(clause, tuple):
            low, high, flipped = clause
        else:
            low, high = clause.span()
            own = [h - low for h in hits if low <= h < high]
            # The brand is this clause's subject when named in it, else the option it belongs to
            # (named before): "…，但生态不如阿里云丰富" speaks ill of the option, well of 阿里云.
            flipped = bool(FLIPS_AFTER.search(clause.group(), 0, own[0])) if own else False
            flipped = flipped or bool(FLIPS_BEFORE.search(clause.group(), own[0] if own else 0))
        low, high = low + offset, high + offset
        for cue in cues:
            if not low <= cue.start < high:
                continue
            positive = cue.positive != flipped
            weight = 1.0 if turn_after is None else AFTER_CONTRAST if cue.start >= turn_after else BEFORE_CONTRAST
            if positive:
                score_pos += weight
            else:
                score_neg += weight
            found.append(("+" if positive else "-") + cue.word)
    return score_pos, score_neg, found


def _negated(text: str, position: int, word: str) -> bool:
    """A negator just before the cue (zh: within the 4 characters before it; en: within the 3
    words before it), unless the cue carries its own (不推荐 is a negative word) or the
    "negator" belongs to another word (不仅 not only, 无论 whatever)."""
    if word[0] in "不没无未" or word.startswith(("not ", "no ")):
        return False
    if word[0].isascii():
        before = text[max(0, position - 30):position].replace("n't", " not")
        words = before.split()[-3:]
        return any(w.strip(".,;:!?()") in _NEGATORS_EN for w in words) and not NOT_ONLY_EN.search(before)
    tail = text[max(0, position - 4):position]
    return any(n in tail for n in NEGATORS_ZH) and not any(w in text[max(0, position - 5):position]
                                                          for w in NOT_NEGATORS_ZH)


def _label(positive: float, negative: float) -> str:
    if positive > 0 and positive >= DOMINANCE * negative:
        return POSITIVE
    if negative > 0 and negative >= DOMINANCE * positive:
        return NEGATIVE
    return NEUTRAL
