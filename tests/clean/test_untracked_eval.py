"""Discovery against the hand-labelled set: tests/eval/untracked.jsonl marks, for each answer of
tests/eval/answers.jsonl, the names it offers as options that brands.yaml does not track
(labelled without the extractor's output; conventions in tests/eval/NOTES_untracked.md).

    python -m tests.clean.test_untracked_eval      # the figures, and the misses, as JSON

A predicted name is right when its key (clean/untracked.py, untracked_key) is the key of a
labelled name of that answer or of the labelled name's parenthesised form. A labelled name that
holds an alias of the catalog ("特斯拉 Model Y", "阿里云 OSS", "iPhone 16") is a tracked brand's
product: the analyzer counts it for that brand, so it is no untracked brand and is left out of
the labels (`tracked_products` counts them). Precision counts
predictions, recall labelled names; "frequent" restricts both to the names the extractor found
in two or more answers, the ones untracked_brands shows with a count above one.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

from visibility_assets.clean.analyzer import Analyzer
from visibility_assets.clean.matcher import AliasMatcher
from visibility_assets.clean.untracked import untracked_key
from visibility_assets.config import load_catalog

EVAL = Path(__file__).parents[1] / "eval"
MIN_LABELLED_ANSWERS = 100
MIN_FREQUENT_PRECISION = 0.85  # the target, on names seen in two or more answers
MIN_PRECISION = 0.8
MIN_RECALL = 0.7


def _lines(name: str) -> list[dict]:
    return [json.loads(line) for line in (EVAL / name).read_text(encoding="utf-8").splitlines() if line.strip()]


def evaluate() -> dict:
    catalog = load_catalog(EVAL / "brands.yaml")
    analyzer, matcher = Analyzer(catalog), AliasMatcher(catalog)
    answers, labels = _lines("answers.jsonl"), _lines("untracked.jsonl")
    predicted, gold, tracked_products = [], [], 0
    for answer, label in zip(answers, labels, strict=True):
        assert answer["id"] == label["id"], (answer["id"], label["id"])
        found = analyzer.analyze(answer["answer"], answer["question"], answer["category"]).untracked
        predicted.append({name.key: name.name for name in found})
        forms = label.get("forms") or {}
        names = [n for n in label["untracked"] if not _holds_alias(matcher, n)]
        tracked_products += len(label["untracked"]) - len(names)
        gold.append({untracked_key(n): {untracked_key(n), *([untracked_key(forms[n])] if n in forms else [])}
                     for n in names})
    frequency = Counter(key for found in predicted for key in found)
    figures, misses = {}, []
    for scope, keep in (("all", lambda key: True), ("frequent", lambda key: frequency[key] >= 2)):
        right = wrong = missed = 0
        for answer, found, wanted in zip(answers, predicted, gold):
            accepted = {key for key in found if keep(key)}
            matched = {g for g, keys in wanted.items() if keys & accepted}
            hits = {key for key in accepted if any(key in keys for keys in wanted.values())}
            right, wrong = right + len(hits), wrong + len(accepted - hits)
            missed += len([g for g in wanted if g not in matched and (scope == "all" or frequency[g] >= 2)])
            if scope == "all" and (accepted - hits or len(matched) < len(wanted)):
                misses.append({"id": answer["id"], "extra": sorted(found[k] for k in accepted - hits),
                               "missed": sorted(g for g in wanted if g not in matched)})
        figures[scope] = {"predictions": right + wrong, "labelled": right + missed,
                          "precision": right / (right + wrong) if right + wrong else 1.0,
                          "recall": right / (right + missed) if right + missed else 1.0}
    labelled_answers = sum(bool(g) for g in gold)
    return {"answers": len(answers), "answers_with_untracked": labelled_answers, "tracked_products": tracked_products,
            "frequent_names": sum(1 for n in frequency.values() if n >= 2), **figures, "misses": misses}


def _holds_alias(matcher: AliasMatcher, name: str) -> bool:
    """Any alias of the catalog in the name, by the matcher's own pass and boundary rules."""
    from visibility_assets.clean.text import find_scope, normalize
    text = normalize(name).text
    hits, _, _ = matcher.scan(text, "", find_scope(text))
    return any(not hit.rule.startswith("boundary") for hit in hits)


def test_the_labelled_set_is_large_enough_and_matches_the_answers():
    labels = _lines("untracked.jsonl")
    assert [label["id"] for label in labels] == [answer["id"] for answer in _lines("answers.jsonl")]
    assert len(labels) >= MIN_LABELLED_ANSWERS and sum(bool(label["untracked"]) for label in labels) >= 30


def test_untracked_names_are_precise_on_frequent_names_and_found_on_the_labelled_set():
    result = evaluate()
    summary = {k: v for k, v in result.items() if k != "misses"}
    assert result["frequent"]["precision"] >= MIN_FREQUENT_PRECISION, summary
    assert result["all"]["precision"] >= MIN_PRECISION and result["all"]["recall"] >= MIN_RECALL, summary


if __name__ == "__main__":
    print(json.dumps(evaluate(), ensure_ascii=False, indent=1))
