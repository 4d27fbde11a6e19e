"""One answer in, its analysis out (docs/analysis.md): validity, mentions, ranks, citations."""

from __future__ import annotations

import re
from bisect import bisect_left
from dataclasses import dataclass

from visibility_assets.clean.advice import NEGATIVE_GATE_CUES, advised_against_brands, avoid_list_brands
from visibility_assets.clean.cues import MARKERS, AnswerCues, find_cues, marker_table
from visibility_assets.clean.echo import question_echo, question_terms
from visibility_assets.clean.matcher import AliasHit, AliasMatcher
from visibility_assets.clean.sense import about_another_meaning, set_aside_common_words
from visibility_assets.clean.sentiment import judge_brands
from visibility_assets.clean.sentiment_model import SentimentModel, all_contexts, features_of, shipped_model
from visibility_assets.clean.stage_clock import (
    CITATIONS,
    MATCHING,
    NORMALIZE_SCOPE,
    RECOMMENDATION,
    RULES,
    SENTIMENT,
    STRUCTURE,
    VALIDITY,
    StageClock,
)
from visibility_assets.clean.structure import Item, Structure, find_structures
from visibility_assets.clean.text import THINK, URL, NormalizedText, find_scope, normalize, strip_scope
from visibility_assets.clean.unknown import TRIGGERS, named_unknown_brands
from visibility_assets.clean.untracked import UntrackedName, untracked_key, untracked_names
from visibility_assets.clean.validity import (
    EMPTY,
    ERROR,
    ERROR_MARKS,
    ERROR_OPENING,
    ERROR_OPENING_MAX,
    ERROR_TEXT,
    GOES_ON,
    IRRELEVANT,
    LONG_REFUSAL_MAX,
    MODERATION,
    REFUSAL,
    REFUSAL_TEXT,
    STRONG_REFUSAL,
    declines,
    error_document,
    only_a_translation,
)
from visibility_assets.config import BrandCatalog
from visibility_assets.config.schema import CANARY, MAX_ANSWER_CHARS
from visibility_assets.core.urls import text_citations

# Bump when a rule changes: every cleaned sample records the version that produced it.
ANALYZER_VERSION = "1.8.0"

CITATION_MARKER = re.compile(r"\[\d{1,3}\]|\[\^\d{1,3}\^?\]|\[citation:\s*\d{1,3}\]", re.I)
CODE_BLOCK = re.compile(r"```.*?(?:```|\Z)", re.S)
# Words of an answer that weighs options; recipes, weather reports and greetings use few of them.
ADVICE_TERMS = re.compile(
    r"推荐|选择|方案|适合|优势|劣势|缺点|优点|性价比|口碑|对比|预算|选型|首选|备选|考虑|建议|品牌|产品|功能|价格|服务|"
    r"recommend|option|choice|pros\b|cons\b|suited|pricing|price|features?|alternative|compare|budget|\bbest\b|"
    r"\bpick\b|worth"
)
MIN_ADVICE_TERMS = 3
# A list led in by one brand's qualities ("阿里云的优势：", "Pros of AWS:") describes that brand:
# the brands its items name are not options.
QUALITIES = (r"(?:优势|优点|缺点|劣势|特点|特色|不足|短板|亮点|好处|弊端|局限|问题|风险|注意事项|pros|cons|strengths?|"
             r"weaknesses|advantages?|disadvantages?|drawbacks?|downsides?|limitations?|benefits|features?|highlights?)")
# A model of the brand may stand between ("华为 Mate 70 的优点", "比亚迪海豹06 的优势", "Li Auto L6's").
DESIGNATION = r"(?:\s*(?:[0-9a-z][0-9a-z.+-]*|[\u4e00-\u9fff]{1,3}[0-9][0-9a-z]*)){0,3}?"
QUALITIES_AFTER_BRAND = re.compile(
    DESIGNATION + r"\s*(?:的|['’]s)?\s*(?:主要|核心|突出|明显|几个|一些|最大|main|key|biggest)?\s*(?:的)?\s*" + QUALITIES)
QUALITIES_BEFORE_BRAND = re.compile(
    r"(?:" + QUALITIES + r"\s+(?:of|for)\s+(?:using\s+)?(?:the\s+)?|\bwhy\s+(?:the\s+|choose\s+|pick\s+)?)$")
LABEL_END = re.compile(r"[\s:：*]*$")
LONG_ANSWER = 300
ADVICE_LIST = re.compile(r"^[ \t]*(?:\d{1,2}[.)、]|[-*+•])\s*\S", re.M)  # a line of a list


@dataclass(slots=True)
class BrandResult:
    mentioned: bool = False
    mention_count: int = 0
    first_mention_order: int | None = None
    list_rank: int | None = None
    recommended: bool | None = None
    sentiment: str | None = None  # positive | neutral | negative (clean/sentiment.py); None: not mentioned
    named_unknown: bool = False  # named only to say nothing is known or found of it (clean/unknown.py)
    sentiment_cues: tuple[str, ...] = ()
    mention_sentiments: tuple = ()  # one Sentiment per accepted hit of the brand, in text order

    def as_json(self) -> dict:
        return {"mentioned": self.mentioned, "mention_count": self.mention_count,
                "first_mention_order": self.first_mention_order, "list_rank": self.list_rank,
                "recommended": self.recommended, "sentiment": self.sentiment, "named_unknown": self.named_unknown}


NOT_MENTIONED = BrandResult().as_json()


@dataclass(slots=True)
class Analysis:
    valid: bool
    invalid_reason: str | None
    category_brands: tuple[str, ...]  # every brand of the answer's category, in catalog order
    mentioned: dict[str, BrandResult]  # only the mentioned ones: categories can hold hundreds
    citations: list[str]
    has_citation: bool
    hits: list[AliasHit]  # every alias hit with its verdict
    normalized: NormalizedText  # the text the hits' positions refer to
    option_list_kind: str | None = None
    capped: bool = False  # longer than the analyzer's max_answer_chars: only that much was read
    untracked: tuple[UntrackedName, ...] = ()  # options the catalog does not know (clean/untracked.py)
    sentiment_features: dict[str, list[str]] | None = None  # per brand, when asked (the model's training)

    def as_invalid(self, reason: str) -> Analysis:
        """This answer counted as invalid for a reason the text cannot show (the platform cut it
        off or moderated it): its alias hits stay on record, none of them counts."""
        for hit in self.hits:
            if hit.accepted:
                hit.rule = f"invalid_answer:{reason}"
        return Analysis(False, reason, self.category_brands, {}, [], False, self.hits, self.normalized,
                        capped=self.capped)

    @property
    def hit_spans(self) -> list[tuple[int, int]]:
        """Each hit's span in the original answer (computed when asked: the JSON output needs none)."""
        return self.normalized.original_spans(self.hits)

    def brand(self, name: str) -> BrandResult:
        return self.mentioned.get(name) or BrandResult()

    def as_json(self, answer_id) -> dict:
        brands = {name: (self.mentioned[name].as_json() if name in self.mentioned else dict(NOT_MENTIONED))
                  for name in self.category_brands}
        return {"id": answer_id, "valid": self.valid, "invalid_reason": self.invalid_reason,
                "brands": brands, "citations": self.citations, "has_citation": self.has_citation,
                "untracked": [name.name for name in self.untracked]}


def _judge_sentiment(body: str, accepted: list[AliasHit], mentions: dict[str, list[int]],
                     brands: dict[str, BrandResult], advised: set[str], cues: AnswerCues,
                     every_context: dict | None) -> None:
    starts = list(dict.fromkeys(hit.start for hit in accepted))  # the hits come in text order
    for name, judged in judge_brands(body, cues, mentions, advised, starts, every_context).items():
        result = brands[name]
        result.sentiment, result.sentiment_cues = judged.overall.label, judged.overall.cues
        result.mention_sentiments = judged.mentions


def _hit_spans(accepted: list[AliasHit]) -> dict[str, list[tuple[int, int]]]:
    spans: dict[str, list[tuple[int, int]]] = {}
    for hit in accepted:
        spans.setdefault(hit.brand, []).append((hit.start, hit.end))
    return spans


def _mark_named_unknown(unknown: set[str], brands: dict[str, BrandResult]) -> None:
    """A brand named only to say nothing is known or found of it (clean/unknown.py): mentioned,
    but neither recommended nor given a tone (there is no opinion of it to read)."""
    for name in unknown:
        result = brands[name]
        result.named_unknown, result.recommended = True, None
        result.sentiment, result.sentiment_cues, result.mention_sentiments = None, (), ()


class Analyzer:
    """clock: a StageClock to time the stages with (the benchmark's), None to run without."""

    def __init__(self, catalog: BrandCatalog, max_answer_chars: int = MAX_ANSWER_CHARS,
                 clock: StageClock | None = None, sentiment_model: SentimentModel | None | bool = True):
        """sentiment_model: True for the shipped one (clean/sentiment_model.py), None for the lexicon alone."""
        self.max_answer_chars = max_answer_chars
        self.clock = clock
        self.sentiment_model = shipped_model() if sentiment_model is True else sentiment_model or None
        # The negative cues first: a marker is one of them when its index is below gates_end.
        # Then the words without which no brand is named but unknown (clean/unknown.py).
        markers = (*NEGATIVE_GATE_CUES, *(word for word in MARKERS if word not in NEGATIVE_GATE_CUES))
        markers += tuple(word for word in TRIGGERS if word not in markers)
        self.matcher = AliasMatcher(catalog, markers=markers)
        self.gates_end = self.matcher.first_marker + len(NEGATIVE_GATE_CUES)
        self.unknown_triggers = frozenset(self.matcher.first_marker + index for index, word in enumerate(markers)
                                          if word in TRIGGERS)
        self.marker_table = marker_table([None] * self.matcher.first_marker + list(markers))
        self.brand_names = {c: tuple(b.name for b in catalog.for_category(c)) for c in catalog.categories}
        # Brands whose names have other meanings the config knows of (they have exclude_contexts),
        # with the words of those meanings (the contexts that do not contain an alias).
        self.other_meanings = {name: tuple(c.text for c in contexts if not c.contains_alias)
                               for (_, name), contexts in self.matcher.contexts.items()}
        self._beyond_brands: dict[frozenset[str], frozenset[str]] = {}
        self.alias_keys = frozenset(untracked_key(alias) for brand in catalog.brands
                                    for alias in (brand.name, *brand.aliases))

    def analyze(self, answer: str, question: str, category: str, with_features: bool = False) -> Analysis:
        """with_features: keep each mentioned brand's sentiment features, as the lexicon saw them."""
        clock = self.clock
        if clock:
            clock.start()
        category_brands = self.brand_names.get(category, ())
        answer = answer or ""
        capped = len(answer) > self.max_answer_chars
        if capped:
            answer = answer[:self.max_answer_chars]
        normalized = normalize(answer)
        text = normalized.text
        scope = find_scope(text, lambda start: question_echo(text, start, question))
        if clock:
            clock.lap(NORMALIZE_SCOPE)
        hits, accepted, markers = self.matcher.scan(text, category, scope)
        if clock:
            clock.lap(MATCHING)
        accepted = set_aside_common_words(accepted, normalized)
        body = strip_scope(text, scope)
        if clock:
            clock.lap(RULES)

        structure, options = _primary_list(body, accepted) if accepted else (None, [])
        if category == CANARY:  # offers no brands: its option list is its first list, whatever it lists
            structure = next(iter(find_structures(body)), None)
        if clock:
            clock.lap(STRUCTURE)
        unknown = set()
        if accepted:
            triggers = self.unknown_triggers
            unknown = named_unknown_brands(body, _hit_spans(accepted),
                                           [start for index, start, _ in markers if index in triggers])
        reason = self._invalid_reason(text, scope, question, hits, accepted, structure is not None,
                                      bool(unknown) and bool(ADVICE_LIST.search(body)))
        if clock:
            clock.lap(VALIDITY)
        if reason:
            for hit in accepted:
                hit.rule = f"invalid_answer:{reason}"
            return Analysis(False, reason, category_brands, {}, [], False, hits, normalized, capped=capped)

        ranks: dict[str, int] = {}
        for position, option in zip(structure.ranks() if structure else (), options):
            if option:
                ranks.setdefault(option, position)
        untracked = tuple(untracked_names(normalized, body, structure, options, hits, self.alias_keys))
        gates_end = self.gates_end
        advised = advised_against_brands(body, accepted, [start for index, start, _ in markers if index < gates_end])
        advised |= avoid_list_brands(body, accepted)
        mentions: dict[str, list[int]] = {}  # each brand's hit starts, the brands in order of first mention
        for hit in accepted:
            mentions.setdefault(hit.brand, []).append(hit.start)
        # A brand advised against is still recommended when the answer lists it as an option.
        brands = {name: BrandResult(True, len(starts), order, ranks.get(name), name not in advised or name in ranks)
                  for order, (name, starts) in enumerate(mentions.items(), start=1)}
        if clock:
            clock.lap(RECOMMENDATION)
        cues = find_cues(body, markers, self.marker_table, scope.body_end, scope.blocks)
        every_context = all_contexts(body, accepted) if self.sentiment_model or with_features else None
        _judge_sentiment(body, accepted, mentions, brands, advised, cues, every_context)
        features = features_of(body, accepted, brands, every_context) if with_features else None
        if self.sentiment_model and brands:
            self.sentiment_model.relabel(body, accepted, brands, every_context)
        _mark_named_unknown(unknown, brands)
        if clock:
            clock.lap(SENTIMENT)

        without_think = THINK.sub(" ", answer) if "<think>" in answer else answer
        citations = text_citations(without_think)
        prose = CODE_BLOCK.sub(" ", without_think) if "```" in without_think else without_think  # xs[3] is no marker
        has_citation = bool(citations) or ("[" in prose and bool(CITATION_MARKER.search(prose)))
        if clock:
            clock.lap(CITATIONS)
        return Analysis(True, None, category_brands, brands, citations, has_citation, hits, normalized,
                        structure.kind if structure else None, capped, untracked,
                        features if with_features else None)

    # --- validity ---------------------------------------------------------------------

    def _invalid_reason(self, text: str, scope, question: str, hits: list[AliasHit], accepted: list[AliasHit],
                        offers_brands: bool, found_nothing_then_advises: bool = False) -> str | None:
        """`found_nothing_then_advises`: the answer says it found nothing on a brand it names and
        goes on to advise in a list of its own ("I couldn't find information on X. When you
        evaluate a provider, check: - ..."): it answers, and X is named but not known."""
        body = THINK.sub(" ", text).strip() if scope.think else text.strip()
        if not body or _only_sources(text, scope):
            return EMPTY
        opening = body[:120]
        if len(body) < ERROR_OPENING_MAX and ERROR_OPENING.match(body) or error_document(body):
            return ERROR
        if not accepted and len(body) < LONG_ANSWER * 2 and (
                (len(body) < LONG_ANSWER and ERROR_TEXT.search(body)) or ERROR_MARKS.search(body)):
            return ERROR
        if found_nothing_then_advises:
            return None  # a refusal offers nothing
        if len(body) < LONG_ANSWER * 2 and MODERATION.search(opening):
            return REFUSAL
        if only_a_translation(body):
            return IRRELEVANT
        # A refusal is short: under LONG_ANSWER when it names brands, twice that when it does not.
        if len(body) < (LONG_ANSWER if accepted else LONG_ANSWER * 2) and REFUSAL_TEXT.search(opening):
            # One that names brands is a refusal when it declines ("I can't help with X's ..."), not
            # when it goes on to answer ("抱歉，我无法提供实时报价，但可以…").
            if not accepted or (STRONG_REFUSAL.search(opening) and not GOES_ON.search(body)):
                return REFUSAL
        # A long, polite one: it declines at once, offers nothing, and names only the question's brands.
        if (len(body) < LONG_REFUSAL_MAX and not offers_brands and REFUSAL_TEXT.search(opening)
                and declines(opening) and not GOES_ON.search(body) and _only_questions_brands(body, question, accepted)):
            return REFUSAL
        if about_another_meaning(body, question, hits, accepted, self.other_meanings):
            return IRRELEVANT
        if not offers_brands and not self._on_topic(body, question, bool(accepted)):
            return IRRELEVANT
        return None

    def _on_topic(self, body: str, question: str, names_brands: bool) -> bool:
        """Shares enough of the question's terms, or weighs options as an answer would. An
        answer that names brands is off topic only when it shares no term but the brand
        names (a 小米粥 recipe for a phone question) and weighs nothing."""
        terms = question_terms(question)
        if names_brands:
            return any(t in body for t in self._terms_beyond_brands(terms)) or bool(ADVICE_TERMS.search(body))
        found = sum(1 for t in terms if t in body)
        if terms and found >= max(1, round(len(terms) * 0.15)):
            return True
        return _weighs_options(body)

    def _terms_beyond_brands(self, terms: frozenset[str]) -> frozenset[str]:
        """The question's terms that are not part of a brand name (cached per question; terms
        hold no line break, so a term found in all_keys lies within one alias)."""
        cached = self._beyond_brands.get(terms)
        if cached is None:
            cached = frozenset(t for t in terms if t not in self.matcher.all_keys)
            self._beyond_brands[terms] = cached
        return cached


def _only_sources(text: str, scope) -> bool:
    """Nothing but blanks before a list of sources with links: a body the platform left empty."""
    end = scope.body_end
    return end < len(text) and (not text[:end] or text[:end].isspace()) and bool(URL.search(text, end))


def _only_questions_brands(body: str, question: str, accepted: list[AliasHit]) -> bool:
    q = normalize(question).text
    return all(body[hit.start:hit.end] in q for hit in accepted)


def _weighs_options(body: str) -> bool:
    """At least MIN_ADVICE_TERMS different advice terms (stops reading once it has them)."""
    seen = set()
    for match in ADVICE_TERMS.finditer(body):
        seen.add(match.group())
        if len(seen) >= MIN_ADVICE_TERMS:
            return True
    return False


def _primary_list(body: str, accepted: list[AliasHit]) -> tuple[Structure | None, list[str | None]]:
    """The first structure whose items offer a brand, with the brand each item offers (its
    list_rank is the item's position). A timeline is no option list."""
    starts = [h.start for h in accepted]
    for structure in find_structures(body):
        if structure.intro[1] and structure.kind in ("numbered", "bullet") and _describes_one_brand(
                body, structure.intro, accepted, starts):
            continue
        if _is_timeline(body, structure.items) or _announces_steps(body, structure.intro):
            continue
        options = [_option_of(body, item, accepted, starts) for item in structure.items]
        if any(options):
            return structure, options
    return None, []


# A date, as an item of a timeline opens: 2023年11月, 2024-03, 12月, July 19, Q3 2024.
DATE = (r"(?:(?:19|20)\d\d\s*(?:年|[-/.]\d|\b)|\d{1,2}\s*月\s*\d{0,2}|"
        r"(?:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]*\.?\s+(?:\d{1,2}\b|(?:19|20)\d\d)|"
        r"q[1-4]\s*(?:19|20)\d\d)")
DATED_LEAD = re.compile(r"[\W_]{0,4}" + DATE)
# An item about an event of the brand its lead names: "**Tesla**: in December 2023 it recalled ...".
DATED_AFTER_LEAD = re.compile(r"[*\s:：–—-]{0,6}(?:(?:in|on|since)\s+|于|在)?" + DATE)


def _is_timeline(body: str, items: list) -> bool:
    """Most items open with a date, or name a brand and then a date: a list of events (incidents,
    releases, recalls), not of options."""
    def dated(item) -> bool:
        start, end, _ = item
        return bool(DATED_LEAD.match(body, start, end) or DATED_AFTER_LEAD.match(body, end, end + 30))

    if len(items) < 2 or not (dated(items[0]) or dated(items[1])):  # a timeline opens with its dates
        return False
    return sum(map(dated, items)) >= max(2, 0.6 * len(items))


# A lead-in that announces steps to take ("迁移可以分五步走：", "操作步骤如下：", "Here are the steps:"):
# a brand a step names is where the step happens, not an option.
STEPS_INTRO = re.compile(r"[几两二三四五六七八九十\d]{1,2}\s*个?步|步骤|\bsteps\b|\bstep[- ]by[- ]step\b")


def _announces_steps(body: str, intro: tuple[int, int]) -> bool:
    start, end = intro
    return end > start and end - start < 80 and STEPS_INTRO.search(body, start, end) is not None


def _describes_one_brand(body: str, intro: tuple[int, int], accepted: list[AliasHit], starts: list[int]) -> bool:
    """The line before a list names a brand's qualities ("阿里云的优势：", "Pros of AWS:")."""
    start, end = intro
    index = bisect_left(starts, start)
    while index < len(starts) and starts[index] < end:
        hit = accepted[index]
        if QUALITIES_AFTER_BRAND.match(body, hit.end, end) or QUALITIES_BEFORE_BRAND.search(body, start, hit.start):
            return True
        index += 1
    return False


def _qualities_label(body: str, hit: AliasHit, start: int, end: int) -> bool:
    """A title that heads one brand's qualities ("**阿里云的优势：**", "Why HubSpot works"), not an option."""
    after = QUALITIES_AFTER_BRAND.match(body, hit.end, end)
    return bool(after and LABEL_END.match(body, after.end(), end)) or bool(
        QUALITIES_BEFORE_BRAND.search(body, start, hit.start))


def _option_of(body: str, item: Item, accepted: list[AliasHit], starts: list[int]) -> str | None:
    """The brand an item offers: the first brand of a titled lead (**Lightsail on AWS**, a
    heading, a table cell), or of a plain lead that opens with it ("阿里云：…", "AWS 与 Azure");
    "与钉钉定位相近" or "Similar to AWS" offer no brand. starts: the accepted hits' starts."""
    lead_start, lead_end, titled = item
    index = bisect_left(starts, lead_start)
    if index == len(starts) or starts[index] >= lead_end:
        return None
    hit = accepted[index]
    if titled:
        return None if _qualities_label(body, hit, lead_start, lead_end) else hit.brand
    opening = body[lead_start:hit.start]
    return hit.brand if not any(c.isalnum() for c in opening) else None
