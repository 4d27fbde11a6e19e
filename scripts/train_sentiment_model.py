"""Trains the learned sentiment (visibility_assets/clean/sentiment_model.py) and writes
visibility_assets/clean/data/sentiment_model.json.gz.

    .venv/bin/python scripts/train_sentiment_model.py [--check]

The pairs: tests/eval/sentiment.jsonl and tests/eval/sentiment_corpus/*.jsonl (3,104 brand-answer
pairs labelled by writers who never saw the rules). The halves, fixed before any training: answers
with an odd number train, those with an even number are held out. Every choice (features, the L2
strength from a grid, by 5-fold cross-validation with a seeded fold draw) is made on the training
half; the held-out half is scored once, beside the lexicon on the same pairs, and the figures go
into the file. Full-batch Adam, seeded and deterministic: about a minute on 2 cores.
--check trains again and fails unless the file it would write equals the shipped one.
"""

from __future__ import annotations

import argparse
import gzip
import json
import random
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from visibility_assets.clean.analyzer import Analyzer  # noqa: E402
from visibility_assets.clean.sentiment_model import FEATURE_VERSION, LABELS, MODEL_FILE, SentimentModel, held_out_pair  # noqa: E402
from visibility_assets.config import load_catalog  # noqa: E402
from visibility_assets.core.label_scores import label_scores  # noqa: E402

EVAL = ROOT / "tests" / "eval"
TARGET = ROOT / "visibility_assets" / "clean" / MODEL_FILE
SEED = 20261205
L2_GRID = (3e-5, 1e-4, 3e-4, 1e-3)
FOLDS, ITERATIONS, LEARNING_RATE = 5, 400, 0.1
MIN_COUNT = 2  # a feature seen in fewer training pairs is left out
KEEP_WEIGHT = 1e-3  # a feature whose weights all stay below this is left out of the file


def labelled_pairs() -> list[dict]:
    files = [EVAL / "sentiment.jsonl", *sorted((EVAL / "sentiment_corpus").glob("*.jsonl"))]
    return [json.loads(line) for path in files
            for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def held_out(pair: dict) -> bool:
    return held_out_pair(pair["id"])


def featurize(pairs: list[dict]) -> list[tuple[list[str] | None, str]]:
    """Each pair's features and the lexicon's label (None and neutral where the analyzer does not
    find the brand: scored as neutral, as tests/clean/test_sentiment_eval.py does)."""
    analyzer = Analyzer(load_catalog(EVAL / "brands.yaml"), sentiment_model=None)
    cache: dict[tuple[str, str, str], object] = {}
    out = []
    for pair in pairs:
        key = (pair["answer"], pair["question"], pair["category"])
        if key not in cache:
            cache[key] = analyzer.analyze(*key, with_features=True)
        analysis = cache[key]
        result = analysis.mentioned.get(pair["brand"])
        features = (analysis.sentiment_features or {}).get(pair["brand"]) if result else None
        out.append((features, result.sentiment if result and result.sentiment else "neutral"))
    return out


class Encoded:
    def __init__(self, rows: list[list[str]], vocabulary: dict[str, int]):
        indexes = [np.array([vocabulary[f] for f in row if f in vocabulary], dtype=np.int64) for row in rows]
        self.flat = np.concatenate(indexes) if indexes else np.zeros(0, dtype=np.int64)
        self.segment = np.repeat(np.arange(len(rows)), [len(i) for i in indexes])
        self.scale = (1 / np.sqrt(np.maximum([len(row) for row in rows], 1)))[:, None]  # as SentimentModel.predict
        self.size = len(rows)

    def logits(self, weights: np.ndarray, bias: np.ndarray) -> np.ndarray:
        z = np.zeros((self.size, 3))
        np.add.at(z, self.segment, weights[self.flat])
        return z * self.scale + bias


def fit(data: Encoded, y: np.ndarray, features: int, l2: float) -> tuple[np.ndarray, np.ndarray]:
    """Multinomial logistic regression with L2, full-batch Adam."""
    weights, bias = np.zeros((features, 3)), np.zeros(3)
    moments = [[np.zeros_like(weights), np.zeros_like(weights)], [np.zeros(3), np.zeros(3)]]
    target = np.eye(3)[y]
    for step in range(1, ITERATIONS + 1):
        z = data.logits(weights, bias)
        z -= z.max(axis=1, keepdims=True)
        p = np.exp(z)
        p /= p.sum(axis=1, keepdims=True)
        g = (p - target) / data.size
        grad_w = np.zeros_like(weights)
        np.add.at(grad_w, data.flat, (g * data.scale)[data.segment])
        grad_w += l2 * weights
        for param, grad, (m, v) in ((weights, grad_w, moments[0]), (bias, g.sum(axis=0), moments[1])):
            m *= 0.9
            m += 0.1 * grad
            v *= 0.999
            v += 0.001 * grad * grad
            param -= LEARNING_RATE * (m / (1 - 0.9 ** step)) / (np.sqrt(v / (1 - 0.999 ** step)) + 1e-8)
    return weights, bias


def vocabulary_of(rows: list[list[str]]) -> dict[str, int]:
    counts: dict[str, int] = {}
    for row in rows:
        for feature in row:
            counts[feature] = counts.get(feature, 0) + 1
    return {f: i for i, f in enumerate(sorted(f for f, c in counts.items() if c >= MIN_COUNT))}


def cross_validate(rows: list[list[str]], y: np.ndarray, l2: float) -> float:
    folds = [i % FOLDS for i in range(len(rows))]
    random.Random(SEED).shuffle(folds)
    gold, predicted = [], []
    for fold in range(FOLDS):
        train = [i for i, f in enumerate(folds) if f != fold]
        test = [i for i, f in enumerate(folds) if f == fold]
        vocabulary = vocabulary_of([rows[i] for i in train])
        weights, bias = fit(Encoded([rows[i] for i in train], vocabulary), y[train], len(vocabulary), l2)
        z = Encoded([rows[i] for i in test], vocabulary).logits(weights, bias)
        gold += [LABELS[k] for k in y[test]]
        predicted += [LABELS[k] for k in z.argmax(axis=1)]
    return label_scores(zip(gold, predicted), LABELS).macro_f1


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="fail unless training gives the shipped file")
    args = parser.parse_args()
    pairs = labelled_pairs()
    featurized = featurize(pairs)
    train = [(f, LABELS.index(p["sentiment"])) for p, (f, _) in zip(pairs, featurized) if not held_out(p) and f]
    rows, y = [f for f, _ in train], np.array([label for _, label in train])
    cv = {l2: cross_validate(rows, y, l2) for l2 in L2_GRID}
    l2 = max(L2_GRID, key=lambda k: (round(cv[k], 4), -k))
    vocabulary = vocabulary_of(rows)
    weights, bias = fit(Encoded(rows, vocabulary), y, len(vocabulary), l2)
    kept = {f: [round(float(w), 5) for w in weights[i]] for f, i in vocabulary.items()
            if np.abs(weights[i]).max() >= KEEP_WEIGHT}
    model = SentimentModel(FEATURE_VERSION, tuple(round(float(b), 5) for b in bias), kept, {})
    test = [(p, f, lexicon) for p, (f, lexicon) in zip(pairs, featurized) if held_out(p)]
    predicted = [model.predict(f)[0] if f else "neutral" for _, f, _ in test]
    model_scores = label_scores([(p["sentiment"], label) for (p, _, _), label in zip(test, predicted)], LABELS)
    lexicon_scores = label_scores([(p["sentiment"], lexicon) for p, _, lexicon in test], LABELS)
    by_language = {lang: {"pairs": sum(1 for p, _, _ in test if p["lang"] == lang), **{
        name: round(label_scores([(p["sentiment"], label) for (p, _, lex), m in zip(test, predicted)
                                  if p["lang"] == lang for label in [m if name == "model" else lex]],
                                 LABELS).accuracy, 4) for name in ("model", "lexicon")}}
        for lang in sorted({p["lang"] for p, _, _ in test})}
    trained = {"pairs": len(pairs), "training_pairs": len(train), "held_out_pairs": len(test), "l2": l2,
               "cross_validated_macro_f1": {str(k): round(v, 4) for k, v in cv.items()},
               "held_out": {"model": model_scores.as_json(), "lexicon": lexicon_scores.as_json(),
                            "by_language_accuracy": by_language},
               "features": len(kept), "seed": SEED}
    model = SentimentModel(FEATURE_VERSION, model.bias, kept, trained)
    data = gzip.compress(json.dumps(model.to_json(), ensure_ascii=False, sort_keys=True).encode("utf-8"), mtime=0)
    print(json.dumps(trained, ensure_ascii=False, indent=1))
    if args.check:
        same = TARGET.exists() and TARGET.read_bytes() == data
        print("the shipped model is reproduced" if same else "the shipped model differs from a fresh training")
        return 0 if same else 1
    TARGET.parent.mkdir(parents=True, exist_ok=True)
    TARGET.write_bytes(data)
    print(f"{TARGET}: {len(data):,} bytes, {len(kept):,} features", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
