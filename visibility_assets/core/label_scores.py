"""How well one set of labels agrees with another: accuracy with its 95% Wilson interval,
macro-F1 and Cohen's κ (the judge's calibration, the learned sentiment's evaluation)."""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

Z95 = 1.959963984540054


def wilson_interval(successes: int, n: int, z: float = Z95) -> tuple[float, float]:
    """The 95% Wilson score interval of successes / n ((0, 1) for n = 0)."""
    if n == 0:
        return 0.0, 1.0
    p = successes / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    spread = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return max(0.0, centre - spread), min(1.0, centre + spread)


@dataclass(frozen=True)
class LabelScores:
    n: int
    correct: int
    accuracy: float
    low: float  # the accuracy's 95% Wilson interval
    high: float
    macro_f1: float
    kappa: float | None  # None when chance agreement is total (one label on both sides)
    confusion: dict  # gold -> predicted -> count
    per_class: dict  # label -> precision, recall, f1, support

    def as_json(self) -> dict:
        return {"n": self.n, "correct": self.correct, "accuracy": round(self.accuracy, 4),
                "interval": [round(self.low, 4), round(self.high, 4)], "macro_f1": round(self.macro_f1, 4),
                "kappa": None if self.kappa is None else round(self.kappa, 4), "confusion": self.confusion}


def label_scores(pairs: Iterable[tuple[str, str]], labels: Sequence[str]) -> LabelScores:
    """pairs: (gold, predicted). Macro-F1 averages the F1 of every label in `labels`."""
    pairs = list(pairs)
    n = len(pairs)
    correct = sum(gold == predicted for gold, predicted in pairs)
    confusion = {gold: {predicted: 0 for predicted in labels} for gold in labels}
    for gold, predicted in pairs:
        confusion[gold][predicted] += 1
    per_class = {}
    for label in labels:
        true_positive = confusion[label][label]
        predicted_as = sum(confusion[gold][label] for gold in labels)
        gold_as = sum(confusion[label].values())
        precision = true_positive / predicted_as if predicted_as else 0.0
        recall = true_positive / gold_as if gold_as else 0.0
        f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
        per_class[label] = {"precision": precision, "recall": recall, "f1": f1, "support": gold_as}
    gold_counts, predicted_counts = Counter(g for g, _ in pairs), Counter(p for _, p in pairs)
    chance = sum(gold_counts[label] * predicted_counts[label] for label in labels) / (n * n) if n else 0.0
    observed = correct / n if n else 0.0
    kappa = (observed - chance) / (1 - chance) if n and chance < 1 else None
    low, high = wilson_interval(correct, n)
    macro_f1 = sum(c["f1"] for c in per_class.values()) / len(labels)
    return LabelScores(n, correct, observed, low, high, macro_f1, kappa, confusion, per_class)
