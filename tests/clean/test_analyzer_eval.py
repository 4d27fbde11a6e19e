"""The analyzer against the hand-labelled evaluation set in tests/eval (see its README)."""

import json
from pathlib import Path

from visibility_assets.clean.analyzer import ANALYZER_VERSION, Analyzer
from visibility_assets.review.shipped_accuracy import ANALYZER_SET_VERSION, SHIPPED_FIGURES
from visibility_assets.config import load_catalog

EVAL = Path(__file__).parents[1] / "eval"


def evaluate() -> dict:
    analyzer = Analyzer(load_catalog(EVAL / "brands.yaml"))
    answers = [json.loads(line) for line in (EVAL / "answers.jsonl").read_text(encoding="utf-8").splitlines() if line.strip()]
    gold = [json.loads(line) for line in (EVAL / "expected.jsonl").read_text(encoding="utf-8").splitlines() if line.strip()]
    tp = fp = fn = entries = count_ok = rank_ok = order_ok = valid_ok = citations_ok = recommended_ok = 0
    unknown = {"tp": 0, "fp": 0, "fn": 0}  # named only to say nothing is known of it (labelled from e249 on)
    misses = []
    for answer, expected in zip(answers, gold, strict=True):
        got = analyzer.analyze(answer["answer"], answer["question"], answer["category"]).as_json(answer["id"])
        valid_ok += (got["valid"], got["invalid_reason"]) == (expected["valid"], expected["invalid_reason"])
        citations_ok += (got["citations"], got["has_citation"]) == (expected["citations"], expected["has_citation"])
        for brand, want in expected["brands"].items():
            have = got["brands"][brand]
            entries += 1
            tp += have["mentioned"] and want["mentioned"]
            fp += have["mentioned"] and not want["mentioned"]
            fn += want["mentioned"] and not have["mentioned"]
            count_ok += have["mention_count"] == want["mention_count"]
            rank_ok += have["list_rank"] == want["list_rank"]
            order_ok += have["first_mention_order"] == want["first_mention_order"]
            recommended_ok += have["recommended"] == want["recommended"]
            if "named_unknown" in want:
                unknown["tp"] += have["named_unknown"] and want["named_unknown"]
                unknown["fp"] += have["named_unknown"] and not want["named_unknown"]
                unknown["fn"] += want["named_unknown"] and not have["named_unknown"]
            if any(have[k] != want[k] for k in want):
                misses.append((answer["id"], brand, {k: (have[k], want[k]) for k in want if have[k] != want[k]}))
    return {
        "answers": len(gold), "brand_entries": entries,
        "mention_precision": tp / (tp + fp), "mention_recall": tp / (tp + fn),
        "mentioned_exact": (entries - fp - fn) / entries,
        "mention_count_exact": count_ok / entries, "list_rank_exact": rank_ok / entries,
        "first_order_exact": order_ok / entries, "recommended_exact": recommended_ok / entries,
        "validity_accuracy": valid_ok / len(gold),
        "citation_exact": citations_ok / len(gold),
        "named_unknown_labelled": unknown["tp"] + unknown["fn"],
        "named_unknown_precision": unknown["tp"] / max(1, unknown["tp"] + unknown["fp"]),
        "named_unknown_recall": unknown["tp"] / max(1, unknown["tp"] + unknown["fn"]), "misses": misses,
    }


def test_analyzer_meets_the_accuracy_thresholds_on_the_labelled_set():
    scores = evaluate()
    report = {k: round(v, 4) if isinstance(v, float) else v for k, v in scores.items() if k != "misses"}
    detail = "\n".join(map(str, scores["misses"][:40]))
    assert scores["answers"] >= 200
    assert scores["mention_precision"] >= 0.99, (report, detail)
    assert scores["mention_recall"] >= 0.99, (report, detail)
    assert scores["mention_count_exact"] >= 0.98, (report, detail)
    assert scores["list_rank_exact"] >= 0.97, (report, detail)
    assert scores["validity_accuracy"] >= 0.98, (report, detail)
    assert scores["recommended_exact"] >= 0.97, (report, detail)
    assert scores["named_unknown_labelled"] >= 40
    assert scores["named_unknown_precision"] >= 0.97, (report, detail)
    assert scores["named_unknown_recall"] >= 0.97, (report, detail)


def test_the_shipped_figures_the_workspace_shows_are_this_analyzers():
    scores = evaluate()
    assert ANALYZER_SET_VERSION == ANALYZER_VERSION
    for field, measured in (("mentioned", "mentioned_exact"), ("mention_count", "mention_count_exact"),
                            ("list_rank", "list_rank_exact"), ("recommended", "recommended_exact")):
        assert SHIPPED_FIGURES[field].accuracy == round(scores[measured], 3), field
        assert SHIPPED_FIGURES[field].items == scores["brand_entries"], field


if __name__ == "__main__":
    result = evaluate()
    for miss in result.pop("misses"):
        print(miss)
    print(json.dumps(result, indent=1))
