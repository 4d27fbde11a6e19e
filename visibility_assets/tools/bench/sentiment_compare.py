"""Brand sentiment on the hand-labelled set (tests/eval/sentiment.jsonl, see tests/eval/SENTIMENT.md):
the product's labeller against a small packaged model and the majority-class baseline.

    python -m visibility_assets.tools.bench.sentiment_compare [--set PATH]

Methods, all on the same brand-answer pairs:

- `product`: the analyzer's label (`Analyzer(...).analyze(...).mentioned[brand].sentiment`); a brand
  the analyzer does not find counts as "neutral" (and in `not_found`). Timed per analyze call, one
  call per pair (the analyzer labels every brand of the answer in that call).
- `packaged`: for Chinese answers SnowNLP (`snownlp`, a naive Bayes model trained on product
  reviews whose weights ship in the package), for English answers VADER (`vaderSentiment`, a
  lexicon-and-rules model whose lexicon ships in the package). Nothing is downloaded at run time.
  Each sees only the sentences of the answer that name the brand (an alias of brands.yaml; a
  table row is one sentence); the scores of those sentences are averaged. VADER's compound score
  uses the thresholds its authors document (>= 0.05 positive, <= -0.05 negative), fixed a priori.
  SnowNLP's P(positive) has no documented 3-class cut-offs, so the two cut-offs are chosen on the
  calibration half only (grid of 0.025, best macro-F1 there) and the test half is never looked
  at while choosing them.
- `majority`: the most frequent label of the calibration half, for every pair.

Split: the pairs of answers with an odd number (s001, s003, ...) are the calibration half, those
with an even number the test half; an answer's pairs stay together. The headline figures of every
method are on the test half; `all_pairs` adds the whole set (for `packaged` it then includes the
half its SnowNLP cut-offs were chosen on). Times are microseconds per pair, the model loaded.

The optional packages are dev-only (not dependencies of the project):
    pip install snownlp==0.12.3 vaderSentiment==3.3.2
Missing, the method is reported as skipped with that message.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import time
import unicodedata
from collections import Counter
from pathlib import Path

from visibility_assets.clean.sentiment_model import held_out_pair

ROOT = Path(__file__).resolve().parents[3]
DEFAULT_SET = ROOT / "tests" / "eval" / "sentiment.jsonl"
LABELS = ("positive", "neutral", "negative")
VADER_POSITIVE, VADER_NEGATIVE = 0.05, -0.05  # vaderSentiment's README thresholds for the compound score
CUTOFF_GRID = [round(0.025 * i, 3) for i in range(1, 40)]
INSTALL = "pip install snownlp==0.12.3 vaderSentiment==3.3.2"


# ------------------------------------------------------------------ the set and its scoring
def load_set(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def is_calibration(item: dict) -> bool:
    return not held_out_pair(item["id"])


def score(gold: list[str], predicted: list[str]) -> dict:
    n = len(gold)
    f1s = []
    for label in LABELS:
        tp = sum(g == p == label for g, p in zip(gold, predicted))
        predicted_n, support = predicted.count(label), gold.count(label)
        precision = tp / predicted_n if predicted_n else 0.0
        recall = tp / support if support else 0.0
        f1s.append(2 * precision * recall / (precision + recall) if precision + recall else 0.0)
    accuracy = sum(g == p for g, p in zip(gold, predicted)) / n if n else 0.0
    return {"n": n, "accuracy": round(accuracy, 4), "macro_f1": round(sum(f1s) / len(LABELS), 4)}


def figures(items: list[dict], predicted: dict[str, str]) -> dict:
    test = [item for item in items if not is_calibration(item)]

    def on(subset):
        return score([item["sentiment"] for item in subset], [predicted[item["id"]] for item in subset])

    result = on(test)
    for lang in ("zh", "en"):
        result[lang] = on([item for item in test if item["lang"] == lang])
    result["all_pairs"] = on(items)
    return result


# ------------------------------------------------------------------ the brand's sentences
_THINK = re.compile(r"<think>.*?</think>", re.S)
_URL = re.compile(r"https?://\S+")
_SPLIT = re.compile(r"(?<=[。！？!?；;])|(?<=[.])\s+(?=[A-Z0-9*\"'(])")
_MARKUP = re.compile(r"\*\*|__|^#+\s*|^\s*(?:[-*•]|\d+[.)、])\s+|[✅❌★☆]")


def _fold(text: str) -> str:
    return unicodedata.normalize("NFKC", text).casefold()


def _names(unit: str, aliases: list[str]) -> bool:
    folded = _fold(unit)
    for alias in aliases:
        start = folded.find(alias)
        while start >= 0:
            end = start + len(alias)
            latin = alias[0].isascii() and alias[0].isalpha()
            before = folded[start - 1] if start else " "
            after = folded[end] if end < len(folded) else " "
            if not latin or not (before.isascii() and before.isalpha()) and not (after.isascii() and after.isalpha()):
                return True
            start = folded.find(alias, start + 1)
    return False


def brand_sentences(answer: str, aliases: list[str]) -> list[str]:
    """The sentences of the answer that name one of the aliases; a table row is one sentence.
    Without any (it cannot happen on the set), the whole answer."""
    body = _URL.sub(" ", _THINK.sub(" ", answer))
    units = []
    for line in body.splitlines():
        line = line.strip()
        if not line or re.fullmatch(r"[|:\-\s]+", line):
            continue
        if line.startswith("|"):
            units.append("，".join(cell.strip() for cell in line.strip("|").split("|")))
            continue
        units.extend(part for part in _SPLIT.split(_MARKUP.sub("", line)) if part.strip())
    folded_aliases = sorted({_fold(alias) for alias in aliases}, key=len, reverse=True)
    named = [unit.strip() for unit in units if _names(unit, folded_aliases)]
    return named or [body]


# ------------------------------------------------------------------ the methods
def run_product(items: list[dict], catalog_path: Path) -> tuple[dict, float, int]:
    from visibility_assets.clean.analyzer import Analyzer
    from visibility_assets.config import load_catalog

    analyzer = Analyzer(load_catalog(catalog_path))
    predicted, not_found, elapsed = {}, 0, 0.0
    for item in items:
        started = time.perf_counter()
        found = analyzer.analyze(item["answer"], item["question"], item["category"]).mentioned.get(item["brand"])
        label = getattr(found, "sentiment", None) if found is not None else None
        elapsed += time.perf_counter() - started
        if found is None:
            not_found += 1
        predicted[item["id"]] = label if label in LABELS else "neutral"
    return predicted, elapsed / len(items) * 1e6, not_found


def _snownlp_probability():
    from snownlp import SnowNLP

    def probability(sentences: list[str]) -> float:
        return sum(SnowNLP(sentence).sentiments for sentence in sentences) / len(sentences)

    return probability


def _vader_compound():
    from vaderSentiment.vaderSentiment import SentimentIntensityAnalyzer

    analyzer = SentimentIntensityAnalyzer()

    def compound(sentences: list[str]) -> float:
        return sum(analyzer.polarity_scores(sentence)["compound"] for sentence in sentences) / len(sentences)

    return compound


def three_way(value: float, negative_below: float, positive_above: float) -> str:
    if value < negative_below:
        return "negative"
    if value > positive_above:
        return "positive"
    return "neutral"


def choose_cutoffs(scored: list[tuple[float, str]]) -> tuple[float, float]:
    """The (negative_below, positive_above) pair of the grid with the best macro-F1 on `scored`
    (ties: the narrower neutral band, then the lower cut-off)."""
    best = None
    gold = [label for _, label in scored]
    for low in CUTOFF_GRID:
        for high in CUTOFF_GRID:
            if high < low:
                continue
            macro = score(gold, [three_way(value, low, high) for value, _ in scored])["macro_f1"]
            key = (macro, -(high - low), -low)
            if best is None or key > best[0]:
                best = (key, (low, high))
    return best[1]


def run_packaged(items: list[dict], aliases: dict[tuple[str, str], list[str]], progress) -> dict:
    try:
        started = time.perf_counter()
        snow = _snownlp_probability()
        snow("测试")  # the first call builds the model's caches
        snow_load = time.perf_counter() - started
    except ImportError:
        return {"skipped": f"snownlp is not installed ({INSTALL})"}
    try:
        started = time.perf_counter()
        vader = _vader_compound()
        vader_load = time.perf_counter() - started
    except ImportError:
        return {"skipped": f"vaderSentiment is not installed ({INSTALL})"}
    values, elapsed = {}, {"zh": 0.0, "en": 0.0}
    for item in items:
        started = time.perf_counter()
        sentences = brand_sentences(item["answer"], aliases[(item["category"], item["brand"])])
        values[item["id"]] = (snow if item["lang"] == "zh" else vader)(sentences)
        elapsed[item["lang"]] += time.perf_counter() - started
    calibration = [(values[item["id"]], item["sentiment"]) for item in items
                   if item["lang"] == "zh" and is_calibration(item)]
    low, high = choose_cutoffs(calibration)
    progress(f"snownlp cut-offs chosen on {len(calibration)} calibration pairs: negative < {low}, positive > {high}")
    predicted = {item["id"]: three_way(values[item["id"]], low, high) if item["lang"] == "zh"
                 else three_way(values[item["id"]], VADER_NEGATIVE, VADER_POSITIVE) for item in items}
    counts = Counter(item["lang"] for item in items)
    result = figures(items, predicted)
    result["us_per_answer"] = round((elapsed["zh"] + elapsed["en"]) / len(items) * 1e6, 1)
    result["us_per_answer_zh_snownlp"] = round(elapsed["zh"] / max(counts["zh"], 1) * 1e6, 1)
    result["us_per_answer_en_vader"] = round(elapsed["en"] / max(counts["en"], 1) * 1e6, 1)
    result["load_s"] = round(snow_load + vader_load, 2)
    result["snownlp_cutoffs"] = {"negative_below": low, "positive_above": high, "chosen_on": "calibration half (zh)"}
    result["vader_cutoffs"] = {"negative_at_most": VADER_NEGATIVE, "positive_at_least": VADER_POSITIVE,
                               "chosen_on": "a priori (vaderSentiment's documented thresholds)"}
    result["models"] = _versions()
    return result


def _versions() -> dict:
    from importlib.metadata import PackageNotFoundError, version

    found = {}
    for package in ("snownlp", "vaderSentiment"):
        try:
            found[package] = version(package)
        except PackageNotFoundError:
            found[package] = None
    return found


def run_sentiment_compare(set_path: Path = DEFAULT_SET, progress=lambda message: print(message, file=sys.stderr)) -> dict:
    from visibility_assets.config import load_catalog

    catalog_path = set_path.parent / "brands.yaml"
    items = load_set(set_path)
    catalog = load_catalog(catalog_path)
    aliases = {(brand.category, brand.name): list(brand.aliases) for brand in catalog.brands}
    progress(f"sentiment compare: {len(items)} pairs, {sum(not is_calibration(i) for i in items)} in the test half")

    methods = {}
    product_predicted, product_us, not_found = run_product(items, catalog_path)
    methods["product"] = {**figures(items, product_predicted), "us_per_answer": round(product_us, 1),
                          "not_found": not_found}
    methods["packaged"] = run_packaged(items, aliases, progress)
    if "skipped" in methods["packaged"]:
        progress(methods["packaged"]["skipped"])
    majority = Counter(item["sentiment"] for item in items if is_calibration(item)).most_common(1)[0][0]
    started = time.perf_counter()
    majority_predicted = {item["id"]: majority for item in items}
    methods["majority"] = {**figures(items, majority_predicted), "label": majority,
                           "us_per_answer": round((time.perf_counter() - started) / len(items) * 1e6, 3)}
    return {
        "set": str(set_path.relative_to(ROOT)) if set_path.is_relative_to(ROOT) else str(set_path),
        "pairs": len(items),
        "test_pairs": sum(not is_calibration(item) for item in items),
        "split": "odd answer numbers calibrate (SnowNLP cut-offs, majority label), even answer numbers are the test half",
        "methods": methods,
        "definition": "accuracy and macro-F1 (3 classes) on the test half; zh/en: the test half by answer language;"
                      " all_pairs: the whole set; us_per_answer: microseconds per brand-answer pair, models loaded",
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m visibility_assets.tools.bench.sentiment_compare",
                                     description=__doc__.split("\n\n")[0])
    parser.add_argument("--set", type=Path, default=DEFAULT_SET, help="the labelled set (brands.yaml beside it)")
    args = parser.parse_args(argv)
    result = run_sentiment_compare(args.set.resolve())
    for name, method in result["methods"].items():
        if "skipped" in method:
            print(f"{name}: skipped: {method['skipped']}")
        else:
            print(f"{name}: accuracy {method['accuracy']:.3f}, macro-F1 {method['macro_f1']:.3f} on {method['n']} test pairs"
                  f" (zh {method['zh']['macro_f1']:.3f}, en {method['en']['macro_f1']:.3f});"
                  f" all pairs {method['all_pairs']['accuracy']:.3f} / {method['all_pairs']['macro_f1']:.3f};"
                  f" {method['us_per_answer']} us per pair")
    print(json.dumps(result, ensure_ascii=False))
    return 0


if __name__ == "__main__":
    sys.exit(main())
