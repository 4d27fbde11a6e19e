"""Advice against a brand (docs/analysis.md, Recommendation): "不推荐 X", "avoid X", "X … skip",
"X is one I'd steer clear of", or a closing clause such as "请避免选择". A brand advised against
is not recommended unless the answer lists it as an option (the analyzer's call)."""

from __future__ import annotations

import re
from bisect import bisect_left

from visibility_assets.clean.json_lists import json_option_lists
from visibility_assets.clean.matcher import AliasHit

# Cues that advise against the brand named after them in the clause ("不推荐 X", "avoid X").
NEGATIVE_CUES_BEFORE = (
    "不推荐", "不建议", "不太建议", "不太推荐", "避免", "别选", "不要选", "不要用", "慎选", "慎用", "不考虑",
    "avoid", "skip", "steer clear of", "not recommend", "wouldn't recommend", "would not recommend",
    "don't recommend", "do not recommend", "not suggest", "stay away from", "pass on",
)
# Advice against "it" in English, after the brand was named: "Google Cloud, I would not go with it",
# "…, it's one I'd steer clear of", and "X is overkill for you. I'd skip it for now."
ADVICE_AGAINST_IT_VERBS = ("not go with", "not recommend", "skip", "avoid", "steer clear of", "pass on")
ADVICE_AGAINST_IT = (r"\bi(?:['’]d| would)\s+(?:" + "|".join(ADVICE_AGAINST_IT_VERBS) + r")\s+(?:it|them)\b|"
                     r"\b(?:it|that)['’]s one (?:i['’]d|i would) steer clear of")
DANGLING_NEGATIVE_EN = re.compile(ADVICE_AGAINST_IT)
VERDICT_NEXT_SENTENCE = re.compile(r"[.。!！]?\s*(?:" + ADVICE_AGAINST_IT + ")")
NEGATIVE_BEFORE = re.compile("|".join(map(re.escape, NEGATIVE_CUES_BEFORE)))
# Clause ends: sentence punctuation, and a comma next to Chinese text (NFKC made ， a ","),
# but not the commas of an English enumeration ("avoid AWS, Azure and GCP").
CLAUSE_END = re.compile(r"[。！？!?;；\n，]|\. |,(?=\s*[\u4e00-\u9fff])|(?<=[\u4e00-\u9fff]),")
SENTENCE_END = re.compile(r"[。！？!?\n]|\. ")
NEGATIVE_IN_CLAUSE_AFTER = re.compile(
    r"不推荐|不建议|不太推荐|不太建议|不列入|不值得|应避免|请避免|避免使用|避免选择|\bskip\b|is not recommended|"
    r"isn't recommended|is best avoided|not recommended|one \w+['’]d steer clear of|one \w+ would steer clear of|steer clear of\s*$")
# Every negative check below needs one of these near the brand: the alias matcher locates
# them in its one pass (with the sentiment lexicon), and only hits with one in reach are read
# closely.
NEGATIVE_GATE_CUES = (*NEGATIVE_CUES_BEFORE, "不值得", "不列入", "isn't recommended", "is best avoided",
                      "not go with")
# A clause with no brand that closes a sentence by advising against what it named before.
DANGLING_NEGATIVE = re.compile(
    r"^[^,]{0,20}?(?:请|应|应该|最好)?(?:避免|不推荐|不建议|不太推荐|不太建议|不列入|(?:可以)?(?:先|暂|暂时)不考虑)"
    r"(?:[^,。]{0,12}?(?:选择|使用|依赖|采用|考虑|购买|推荐|首选|选|用|买))?(?:它们?|这家|这款)?[了吧]?\s*(?:[:：].*)?$")
# A question about the brand answered by a bare verdict: "X？不推荐。"
VERDICT_AFTER_QUESTION = re.compile(r"\?\s*(?:不推荐|不建议|不太推荐|不太建议|not recommended)")
NEGATIVE_WINDOW = 40

# A list of its own for the options to avoid, beside the recommended one: a heading, a bold
# label or a line ending in a colon that says so ("### 避坑", "**不推荐：**", "Avoid:"), then
# list items. Every brand an item names is advised against.
AVOID_TITLE_WORDS = ("避坑", "避雷", "不推荐", "不建议", "慎选", "慎用", "慎买", "不太推荐", "暂不推荐", "avoid",
                     "not recommended", "skip", "steer clear", "think twice")
AVOID_TITLE = re.compile(
    r"^\s*(?:#{1,6}\s*)?(?:\*\*)?\s*(?:[^\w\s*#]{1,3}\s*)?(?:\d{1,2}[.)、]\s*)?(?:[^\n:*]{0,8}?)"
    r"(?:" + "|".join(map(re.escape, AVOID_TITLE_WORDS)) + r")[^\n:*]{0,14}?(?:\*\*)?\s*:?\s*(?:\*\*)?\s*$")
AVOID_TITLE_WORD = re.compile("|".join(map(re.escape, AVOID_TITLE_WORDS)))
AVOID_TITLE_MAX = 40  # characters of a title line, markup included
AVOID_ITEM = re.compile(r"^\s*(?:[-*+•·]|\d{1,2}[.)、]|[\u2190-\u2bff\U0001f300-\U0001faff]\ufe0f?)\s*\S")


def advised_against_brands(body: str, accepted: list[AliasHit], cue_starts: list[int]) -> set[str]:
    """The brands the answer advises against: a hit is read closely only when a negative cue
    starts between NEGATIVE_WINDOW before it and its sentence's end (the reach of the rules).
    cue_starts: where NEGATIVE_GATE_CUES occur in the answer, in order."""
    advised: set[str] = set()
    if not cue_starts:
        return advised
    for position, hit in enumerate(accepted):
        if hit.brand in advised:
            continue
        sentence_end = SENTENCE_END.search(body, hit.end)
        stop = sentence_end.start() if sentence_end else len(body)
        nearest = bisect_left(cue_starts, hit.start - NEGATIVE_WINDOW)
        if nearest == len(cue_starts):
            continue
        if cue_starts[nearest] < stop and _advised_against(body, hit, stop, _next_other_brand(accepted, position)):
            advised.add(hit.brand)
        elif cue_starts[nearest] < stop + 4 and VERDICT_AFTER_QUESTION.match(body, stop):
            advised.add(hit.brand)
        elif cue_starts[nearest] < stop + 30 and VERDICT_NEXT_SENTENCE.match(body, stop):
            advised.add(hit.brand)
    return advised


def avoid_list_brands(body: str, accepted: list[AliasHit]) -> set[str]:
    """The brands named in the items of a list of options to avoid (AVOID_TITLE): the list runs
    from its title's next line over list items (blank lines between them too) and stops at the
    first line of another kind, such as a closing sentence or the next heading. Only the short
    lines that hold a title word are read as titles (most answers advise against in prose)."""
    spans, titles_read = [], set()
    for word in AVOID_TITLE_WORD.finditer(body):
        line_start = body.rfind("\n", 0, word.start()) + 1
        if line_start in titles_read:  # a line with two title words ("不推荐/慎选") is read once
            continue
        titles_read.add(line_start)
        line_end = body.find("\n", word.end())
        line_end = len(body) if line_end < 0 else line_end
        if line_end - line_start > AVOID_TITLE_MAX or not AVOID_TITLE.match(body[line_start:line_end]):
            continue
        offset = line_end + 1
        while offset < len(body):
            end = body.find("\n", offset)
            end = len(body) if end < 0 else end
            line = body[offset:end]
            if AVOID_ITEM.match(line):
                spans.append((offset, end))
            elif line.strip() and not line.startswith((" ", "\t")):
                break
            offset = end + 1
    if "```" in body:
        spans += json_option_lists(body)[1]  # a JSON "not_recommended" array
    return {hit.brand for hit in accepted for start, end in spans if start <= hit.start < end} if spans else set()


def _next_other_brand(accepted: list[AliasHit], position: int) -> int:
    """Where the next hit of another brand starts (the hits are in text order)."""
    brand = accepted[position].brand
    return next((hit.start for hit in accepted[position + 1:] if hit.brand != brand), 1 << 62)


def _advised_against(body: str, hit: AliasHit, stop: int, next_other: int) -> bool:
    """The answer advises against the brand in the clause that names it ("不推荐 X",
    "X 这个阶段 skip 就好", "I'd skip brands like X"), or in a brand-less clause that closes
    the same sentence, which ends at stop ("X 不符合要求，请避免选择。"); a clause that says "it"
    ("不建议为此选它") means the brand named last before it."""
    start = _clause_start(body, hit.start)
    if NEGATIVE_BEFORE.search(body, start, hit.start):
        return True
    end = _clause_end(body, hit.end)
    if NEGATIVE_IN_CLAUSE_AFTER.search(body, hit.end, end) or DANGLING_NEGATIVE_EN.search(body, hit.end, end):
        return True
    while end < stop:
        following = _clause_end(body, end + 1)
        clause = DANGLING_NEGATIVE.match(body[end + 1:following])
        if (clause and (next_other > end or "它" not in clause.group())) or DANGLING_NEGATIVE_EN.search(
                body, end + 1, following):
            return True
        end = following
    return False


def _clause_start(body: str, position: int) -> int:
    start = max(0, position - NEGATIVE_WINDOW)
    last = None
    for last in CLAUSE_END.finditer(body, start, position):
        pass
    return last.end() if last else start


def _clause_end(body: str, position: int) -> int:
    found = CLAUSE_END.search(body, position)
    return found.start() if found else len(body)
