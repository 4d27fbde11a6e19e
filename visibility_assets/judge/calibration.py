"""`visibility judge calibrate`: the configured judge asked about answers whose sentiment people
labelled (the shipped sets, and the deployment's random-sample reviews), and its agreement with
them per language: accuracy with its interval, macro-F1 and Cohen's κ.

The calls go through the judge's own path (judge/run.py: the collector's pacing, retries and
daily budget, the journal) as the journal partition `judge:calibration` of the day; a judgement
stored once is read back, never paid again.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from visibility_assets.collect.plan import content_hash
from visibility_assets.config import Platform, VisibilityConfig
from visibility_assets.core.label_scores import LabelScores, label_scores
from visibility_assets.judge.plan import JudgeItem
from visibility_assets.judge.prompt import SENTIMENTS, judge_prompt

CALIBRATION = "calibration"  # the journal partition judge:calibration
REVIEWS_SET = "reviews"  # the deployment's random-sample reviews
LANGUAGES = {"zh": "zh", "zh-hans": "zh", "zh-hant": "zh-Hant", "en": "en"}
REQUIRED = ("id", "question", "answer", "category", "brand", "sentiment")
CJK = re.compile(r"[\u3400-\u9fff\uf900-\ufaff]")
# A reply labels each brand in about this many tokens (the JSON of one verdict with claims).
REPLY_TOKENS_PER_BRAND, REPLY_TOKENS_FIXED = 60, 20


# The labelled sets a clone of the repository holds (tests/eval/SENTIMENT.md): the hand-labelled
# set and the corpus the learned sentiment is trained on. An installed package has none.
REPOSITORY = Path(__file__).resolve().parents[2]
SHIPPED_SETS = ("tests/eval/sentiment.jsonl", "tests/eval/sentiment_corpus/*.jsonl")


def shipped_sentiment_sets() -> list[Path]:
    return [path for pattern in SHIPPED_SETS for path in sorted(REPOSITORY.glob(pattern))]


class CalibrationError(ValueError):
    """A labelled set that cannot be read: the message names the file, the line and the problem."""


@dataclass(frozen=True)
class LabelledPair:
    set_name: str  # the file's stem, or REVIEWS_SET
    item_id: str  # the pair's id in its set (a review's request key)
    question: str
    answer: str
    category: str
    brand: str
    label: str  # positive | neutral | negative, as people labelled it
    language: str  # zh | zh-Hant | en | other


def read_labelled_set(path: Path) -> list[LabelledPair]:
    """One JSONL set of brand-answer pairs (tests/eval/SENTIMENT.md's format)."""
    pairs = []
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as exc:
        raise CalibrationError(f"{path}: cannot be read: {exc}") from None
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            entry = json.loads(line)
        except ValueError as exc:
            raise CalibrationError(f"{path}:{number}: not JSON: {exc}") from None
        if not isinstance(entry, dict):
            raise CalibrationError(f"{path}:{number}: not a JSON object")
        missing = [key for key in REQUIRED if not isinstance(entry.get(key), str) or not entry[key]]
        if missing:
            raise CalibrationError(f"{path}:{number}: missing or not text: {', '.join(missing)}")
        if entry["sentiment"] not in SENTIMENTS:
            raise CalibrationError(f"{path}:{number}: sentiment {entry['sentiment']!r} is not one of"
                                   f" {', '.join(SENTIMENTS)}")
        pairs.append(LabelledPair(path.stem, entry["id"], entry["question"], entry["answer"], entry["category"],
                                  entry["brand"], entry["sentiment"], language_of(entry.get("lang"))))
    return pairs


def language_of(tag: str | None) -> str:
    return LANGUAGES.get((tag or "").lower(), "other")


def calibration_items(pairs: Sequence[LabelledPair], day: str) -> list[JudgeItem]:
    """One judge item per labelled answer, asking about its labelled brands in the order labelled."""
    brands: dict[tuple[str, str, str], list[str]] = {}
    for pair in pairs:
        asked = brands.setdefault((pair.question, pair.answer, pair.category), [])
        if pair.brand not in asked:
            asked.append(pair.brand)
    items = []
    for (question, answer, category), names in brands.items():
        digest = content_hash(answer)
        items.append(JudgeItem(f"{CALIBRATION}-{digest[:24]}", day, CALIBRATION, category, question, answer,
                               digest, tuple(names)))
    return items


def pair_item_key(pair: LabelledPair) -> str:
    return f"{CALIBRATION}-{content_hash(pair.answer)[:24]}"


def estimated_tokens(text: str) -> int:
    """A rough count, labelled as one wherever it is shown: a CJK character is about a token,
    other text about four characters to one."""
    cjk = len(CJK.findall(text))
    return cjk + (len(text) - cjk + 3) // 4


@dataclass(frozen=True)
class CostEstimate:
    requests: int
    prompt_tokens: int
    completion_tokens: int
    cost: float | None  # None: prices.yaml has no price for the judge's model that day
    currency: str | None


def estimate_cost(config: VisibilityConfig, judge_on: Platform, items: Sequence[JudgeItem], day) -> CostEstimate:
    """What asking the judge about these items should cost (first replies only: a retry of a
    reply that does not validate costs as much again)."""
    assert config.judge is not None
    prompt_tokens = sum(estimated_tokens(judge_prompt(config.judge.prompt_version, i.question, i.answer, i.brands))
                        for i in items)
    completion_tokens = sum(REPLY_TOKENS_FIXED + REPLY_TOKENS_PER_BRAND * len(i.brands) for i in items)
    price = config.price(judge_on.name, judge_on.model, day)
    if price is None:
        return CostEstimate(len(items), prompt_tokens, completion_tokens, None, None)
    cost = (prompt_tokens * price.input_per_mtok + completion_tokens * price.output_per_mtok) / 1_000_000
    return CostEstimate(len(items), prompt_tokens, completion_tokens, round(cost, 6), price.currency)


@dataclass(frozen=True)
class CalibrationResult:
    judged_pairs: list[tuple[LabelledPair, str]]  # (pair, the judge's label)
    unjudged: int  # pairs whose answer the judge gave no valid verdict for
    overall: LabelScores
    by_language: dict[str, LabelScores]
    by_set: dict[str, LabelScores]


def score_verdicts(pairs: Sequence[LabelledPair], verdicts: dict[tuple[str, str], str]) -> CalibrationResult:
    """verdicts: (item request key, brand) -> the judge's sentiment."""
    given = ((pair, verdicts.get((pair_item_key(pair), pair.brand))) for pair in pairs)
    judged = [(pair, verdict) for pair, verdict in given if verdict is not None]

    def scores(keep: Callable[[LabelledPair], bool]) -> LabelScores:
        return label_scores([(p.label, v) for p, v in judged if keep(p)], SENTIMENTS)

    languages = sorted({p.language for p, _ in judged})
    sets = sorted({p.set_name for p, _ in judged})
    return CalibrationResult(judged, len(pairs) - len(judged), scores(lambda p: True),
                             {lang: scores(lambda p, lang=lang: p.language == lang) for lang in languages},
                             {name: scores(lambda p, name=name: p.set_name == name) for name in sets})
