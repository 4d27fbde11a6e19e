"""Brand sentiment against the hand-labelled set in tests/eval/sentiment.jsonl (see tests/eval/SENTIMENT.md).

`evaluate(labeller)` scores any labeller, a callable `(answer, question, category, brand) -> label`
with label "positive" | "neutral" | "negative" (or None: the labeller did not find the brand, scored
as "neutral" and counted in `not_found`). It reports accuracy, macro-F1, per-class precision, recall
and F1, the confusion matrix, the same per language, and the majority-class baseline measured in the
same run on the same items. The product's labeller is read through the analyzer
(`Analyzer(...).analyze(...).mentioned[brand].sentiment`), never imported directly.

    python -m tests.clean.test_sentiment_eval          # both halves and their baselines, as JSON

The set has two halves (tests/eval/SENTIMENT.md): answers with an odd number calibrate, those
with an even number are held out. Rules are tuned on the calibration half only; the held-out
half is scored, never read: its misses are not printed.
"""

from __future__ import annotations

import json
import unicodedata
from collections import Counter
from collections.abc import Callable
from pathlib import Path

import pytest

EVAL = Path(__file__).parents[1] / "eval"
SET = EVAL / "sentiment.jsonl"
LABELS = ("positive", "neutral", "negative")

# Floors just under what the product's labeller reaches on this independent set (0.562 accuracy,
# 0.560 macro-F1 with analyzer 1.1.0): a regression guard, not the goal. The goal the set was
# built for (0.75 / 0.70) is not met yet: positive mentions without a lexicon cue stay neutral.
MIN_ACCURACY = 0.52
MIN_MACRO_F1 = 0.52
MIN_MACRO_F1_OVER_MAJORITY = 0.15  # absolute macro-F1 points above the majority-class baseline
MIN_PAIRS = 600

Labeller = Callable[[str, str, str, str], "str | None"]


def load_set(path: Path = SET) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def score(gold: list[str], predicted: list[str]) -> dict:
    """Accuracy, macro-F1 over the three classes, per-class figures and the confusion matrix
    (`confusion[gold][predicted]`). A class never predicted has precision 0."""
    from visibility_assets.core.label_scores import label_scores

    if len(gold) != len(predicted):
        raise ValueError("gold and predicted differ in length")
    scores = label_scores(zip(gold, predicted), LABELS)
    return {"n": scores.n, "accuracy": scores.accuracy, "macro_f1": scores.macro_f1,
            "per_class": scores.per_class, "confusion": scores.confusion}


def halves(items: list[dict]) -> tuple[list[dict], list[dict]]:
    """The calibration half (answers with an odd number: s001, s003 ...) and the held-out half;
    an answer's pairs stay together. The split is the sentiment bench's."""
    from visibility_assets.tools.bench.sentiment_compare import is_calibration

    return [i for i in items if is_calibration(i)], [i for i in items if not is_calibration(i)]


def summary(scores: dict, with_misses: bool) -> dict:
    """The figures of one half: accuracy, macro-F1, per class and language, the majority baseline."""
    kept = {k: v for k, v in scores.items() if k != "misses" or with_misses}
    kept["majority"] = {k: scores["majority"][k] for k in ("label", "accuracy", "macro_f1")}
    kept["by_language"] = {lang: {k: s[k] for k in ("n", "accuracy", "macro_f1")}
                           for lang, s in scores["by_language"].items()}
    return kept


def majority_label(items: list[dict]) -> str:
    counts = Counter(item["sentiment"] for item in items)
    return max(LABELS, key=lambda label: (counts[label], label == "neutral"))


def evaluate(labeller: Labeller, items: list[dict] | None = None) -> dict:
    items = load_set() if items is None else items
    gold, predicted, misses, not_found = [], [], [], 0
    for item in items:
        label = labeller(item["answer"], item["question"], item["category"], item["brand"])
        if label is None:
            not_found += 1
            label = "neutral"
        if label not in LABELS:
            raise ValueError(f"{item['id']}: labeller returned {label!r}")
        gold.append(item["sentiment"])
        predicted.append(label)
        if label != item["sentiment"]:
            miss = {"id": item["id"], "brand": item["brand"], "gold": item["sentiment"], "got": label}
            cues = getattr(labeller, "last_cues", None)
            if cues is not None:
                miss["cues"] = list(cues)
            misses.append(miss)
    result = score(gold, predicted)
    result["not_found"] = not_found
    result["by_language"] = {}
    for lang in sorted({item["lang"] for item in items}):
        keep = [i for i, item in enumerate(items) if item["lang"] == lang]
        result["by_language"][lang] = score([gold[i] for i in keep], [predicted[i] for i in keep])
    majority = majority_label(items)
    result["majority"] = {"label": majority, **score(gold, [majority] * len(gold))}
    result["misses"] = misses
    return result


class ProductLabeller:
    """The product's sentiment, read through the analyzer. A brand the analyzer does not find in
    the answer gives None (scored as neutral and counted in `not_found`). The answers of the set
    come in runs of several brands, so the last analysis is kept."""

    def __init__(self, catalog_path: Path = EVAL / "brands.yaml", lexicon_only: bool = False):
        from visibility_assets.clean.analyzer import Analyzer
        from visibility_assets.config import load_catalog

        self.analyzer = Analyzer(load_catalog(catalog_path), sentiment_model=None if lexicon_only else True)
        self._last: tuple[tuple[str, str, str], object] | None = None
        self.last_cues: tuple[str, ...] | None = None

    def __call__(self, answer: str, question: str, category: str, brand: str) -> str | None:
        key = (answer, question, category)
        if self._last is None or self._last[0] != key:
            self._last = (key, self.analyzer.analyze(answer, question, category))
        found = self._last[1].mentioned.get(brand)
        if found is None:
            self.last_cues = ("<brand not found>",)
            return None
        self.last_cues = tuple(getattr(found, "sentiment_cues", ()) or ())
        return found.sentiment


def product_sentiment_missing() -> str | None:
    """Why the product's labeller cannot be scored yet, or None when it can."""
    try:
        labeller = ProductLabeller()
        label = labeller("阿里云的稳定性很好，推荐选择阿里云。", "阿里云怎么样？", "cloud", "阿里云")
    except AttributeError as error:
        return f"sentiment not implemented yet ({error})"
    if label is None:
        return "sentiment not implemented yet (no sentiment for a mentioned brand)"
    return None


def _nfkc(text: str) -> str:
    return unicodedata.normalize("NFKC", text).casefold()


def test_the_set_is_well_formed_and_balanced():
    from visibility_assets.config import load_catalog

    catalog = load_catalog(EVAL / "brands.yaml")
    items = load_set()
    assert len(items) >= MIN_PAIRS
    assert len({item["id"] for item in items}) == len(items)
    for item in items:
        assert {"id", "question", "answer", "category", "brand", "sentiment", "lang"} <= item.keys(), item["id"]
        assert item["sentiment"] in LABELS, item["id"]
        assert item["lang"] in ("zh", "en"), item["id"]
        brands = {brand.name: brand for brand in catalog.for_category(item["category"])}
        assert item["brand"] in brands, (item["id"], item["brand"])
        assert any(_nfkc(alias) in _nfkc(item["answer"]) for alias in brands[item["brand"]].aliases), item["id"]
    classes = Counter(item["sentiment"] for item in items)
    assert min(classes.values()) / len(items) >= 0.15, classes
    zh_share = sum(item["lang"] == "zh" for item in items) / len(items)
    assert 0.5 <= zh_share <= 0.7, zh_share
    per_answer = Counter(item["id"].rsplit("-", 1)[0] for item in items)
    assert sum(n >= 2 for n in per_answer.values()) >= len(per_answer) / 2


def test_the_scores_of_known_labellers():
    items = load_set()
    gold = {(item["answer"], item["brand"]): item["sentiment"] for item in items}
    perfect = evaluate(lambda answer, question, category, brand: gold[(answer, brand)], items)
    assert perfect["accuracy"] == perfect["macro_f1"] == 1.0 and perfect["misses"] == []
    constant = evaluate(lambda *_: perfect["majority"]["label"], items)
    assert constant["accuracy"] == constant["majority"]["accuracy"]
    assert constant["macro_f1"] == pytest.approx(constant["majority"]["macro_f1"])
    missing = evaluate(lambda *_: None, items)
    assert missing["not_found"] == len(items)
    # a small case worked by hand: gold P P N G, predicted P N N N
    hand = score(["positive", "positive", "neutral", "negative"], ["positive", "neutral", "neutral", "neutral"])
    assert hand["accuracy"] == 0.5
    assert hand["per_class"]["neutral"] == {"precision": 1 / 3, "recall": 1.0, "f1": 0.5, "support": 1}
    assert hand["per_class"]["positive"]["f1"] == pytest.approx(2 / 3)
    assert hand["macro_f1"] == pytest.approx((2 / 3 + 0.5 + 0.0) / 3)
    assert hand["confusion"]["positive"] == {"positive": 1, "neutral": 1, "negative": 0}


def test_the_product_labeller_beats_the_majority_baseline_and_meets_the_thresholds():
    reason = product_sentiment_missing()
    if reason:
        pytest.skip(reason)
    scores = evaluate(ProductLabeller())
    report = {k: scores[k] for k in ("n", "accuracy", "macro_f1", "not_found")}
    report["majority_macro_f1"] = scores["majority"]["macro_f1"]
    report["per_class_f1"] = {label: round(c["f1"], 3) for label, c in scores["per_class"].items()}
    report["confusion"] = scores["confusion"]
    detail = "\n".join(map(str, scores["misses"][:60]))
    assert scores["macro_f1"] - scores["majority"]["macro_f1"] >= MIN_MACRO_F1_OVER_MAJORITY, (report, detail)
    assert scores["accuracy"] >= MIN_ACCURACY, (report, detail)
    assert scores["macro_f1"] >= MIN_MACRO_F1, (report, detail)


def main() -> None:
    reason = product_sentiment_missing()
    labeller = (lambda *_: None) if reason else ProductLabeller()
    items = load_set()
    calibration, held_out = halves(items)
    report = {
        "labeller": f"none ({reason}): the majority baseline only" if reason else "the product's, through the analyzer",
        "pairs": len(items), "answers": len({i["id"].split("-")[0] for i in items}),
        "calibration": summary(evaluate(labeller, calibration), with_misses=True),
        "held_out": summary(evaluate(labeller, held_out), with_misses=False),
    }
    print(json.dumps(report, ensure_ascii=False, indent=1))


def test_the_accuracy_the_report_prints_is_the_one_measured_for_this_analyzer():
    """On the held-out half of every labelled pair (this set and sentiment_corpus/), which the
    learned model was not trained on (scripts/train_sentiment_model.py)."""
    from visibility_assets.clean.analyzer import ANALYZER_VERSION
    from visibility_assets.review.shipped_accuracy import SENTIMENT_HELD_OUT

    every_pair = load_set() + [item for path in sorted((EVAL / "sentiment_corpus").glob("*.jsonl"))
                               for item in load_set(path)]
    held_out = halves(every_pair)[1]
    scores = evaluate(ProductLabeller(), held_out)
    lexicon = evaluate(ProductLabeller(lexicon_only=True), held_out)
    measured = (ANALYZER_VERSION, len(held_out), round(scores["accuracy"], 3), round(scores["macro_f1"], 3),
                round(scores["majority"]["accuracy"], 3), round(lexicon["accuracy"], 3))
    assert (SENTIMENT_HELD_OUT.analyzer_version, SENTIMENT_HELD_OUT.pairs, SENTIMENT_HELD_OUT.accuracy,
            SENTIMENT_HELD_OUT.macro_f1, SENTIMENT_HELD_OUT.majority_accuracy,
            SENTIMENT_HELD_OUT.lexicon_accuracy) == measured
    assert scores["accuracy"] >= lexicon["accuracy"] + 0.05  # the model earns its place over the lexicon


if __name__ == "__main__":
    main()
