"""Trains the learned sentiment (visibility_assets/clean/sentiment_model.py) and writes
visibility_assets/clean/data/sentiment_model.json.gz.

    .venv/bin/python scripts/train_sentiment_model.py [--check]

The pairs: tests/eval/sentiment.jsonl and tests/eval/sentiment_corpus/*.jsonl (3,104 brand-answer
pairs labelled by writers who never saw the rules), split in halves fixed before any training:
answers with an odd number train, those with an even number are held out. Everything written
since, tests/eval/sentiment_training/*.jsonl (answers and excerpts of answers by later writers
under the same rules), trains only, so the held-out half stays the one every earlier model was
scored on. Every choice (features, the L2 strength from a grid, by 5-fold cross-validation whose
folds keep an answer's pairs together) is made on the training pairs; the held-out half is
scored once, beside the lexicon on the same pairs, and the figures go into the file. The fit is
scikit-learn's multinomial logistic regression (L-BFGS, deterministic), a training-time
dependency only: the package reads the weights with numpy. About seven minutes on 2 cores:

    .venv/bin/python -m pip install -e '.[train]'

--check trains again and fails unless the file it would write equals the shipped one.
"""

from __future__ import annotations

import argparse
import gzip
import json
import sys
from pathlib import Path

import numpy as np

try:
    from scipy.sparse import csr_matrix
    from sklearn.linear_model import LogisticRegression
    from sklearn.model_selection import GroupKFold
except ImportError as missing:
    sys.exit(f"scripts/train_sentiment_model.py needs the training extra ({missing.name} is missing):"
             " .venv/bin/python -m pip install -e '.[train]'")

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from visibility_assets.clean.analyzer import Analyzer  # noqa: E402
from visibility_assets.clean.sentiment_model import FEATURE_VERSION, LABELS, MODEL_FILE, SentimentModel, held_out_pair  # noqa: E402
from visibility_assets.config import load_catalog  # noqa: E402
from visibility_assets.core.label_scores import label_scores  # noqa: E402

EVAL = ROOT / "tests" / "eval"
TARGET = ROOT / "visibility_assets" / "clean" / MODEL_FILE
C_GRID = (3.0, 10.0, 30.0)  # the inverse strength of the L2 penalty
FOLDS, MAX_ITERATIONS = 5, 5000
MIN_COUNT = 3  # a feature seen in fewer training pairs is left out
KEEP_WEIGHT = 1e-3  # a feature whose weights all stay below this is left out of the file


def labelled_pairs() -> list[dict]:
    """The pairs split in halves (held_out tells which)."""
    return read_pairs([EVAL / "sentiment.jsonl", *sorted((EVAL / "sentiment_corpus").glob("*.jsonl"))])


def training_only_pairs() -> list[dict]:
    return read_pairs(sorted((EVAL / "sentiment_training").glob("*.jsonl")))


def read_pairs(files: list[Path]) -> list[dict]:
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


def answer_of(pair: dict) -> str:
    """The answer a pair belongs to (its id without the brand's number)."""
    return pair["id"].rsplit("-", 1)[0]


def vocabulary_of(rows: list[list[str]]) -> dict[str, int]:
    pairs_holding: dict[str, int] = {}
    for row in rows:
        for feature in set(row):
            pairs_holding[feature] = pairs_holding.get(feature, 0) + 1
    return {f: i for i, f in enumerate(sorted(f for f, c in pairs_holding.items() if c >= MIN_COUNT))}


def matrix(rows: list[list[str]], vocabulary: dict[str, int]) -> csr_matrix:
    """Each feature as often as it occurs, the row scaled by 1/sqrt of its features (known or
    not), as SentimentModel.predict reads it."""
    data, columns, pointers = [], [], [0]
    for row in rows:
        counts: dict[int, int] = {}
        for feature in row:
            index = vocabulary.get(feature)
            if index is not None:
                counts[index] = counts.get(index, 0) + 1
        scale, present = 1 / np.sqrt(max(len(row), 1)), sorted(counts)
        columns += present
        data += [counts[i] * scale for i in present]
        pointers.append(len(columns))
    return csr_matrix((np.array(data), np.array(columns, dtype=np.int64), np.array(pointers)),
                      shape=(len(rows), len(vocabulary)))


def fit(features: csr_matrix, y: np.ndarray, c: float) -> LogisticRegression:
    return LogisticRegression(C=c, max_iter=MAX_ITERATIONS).fit(features, y)


def cross_validate(features: csr_matrix, y: np.ndarray, answers: list[str], c: float) -> float:
    """Macro-F1 over folds that keep an answer's pairs together (the vocabulary is the training
    pairs': a feature's presence in a fold is all it shares with the others)."""
    gold, predicted = [], []
    for train, test in GroupKFold(n_splits=FOLDS).split(features, y, answers):
        gold += [LABELS[k] for k in y[test]]
        predicted += [LABELS[k] for k in fit(features[train], y[train], c).predict(features[test])]
    return label_scores(zip(gold, predicted), LABELS).macro_f1


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="fail unless training gives the shipped file")
    args = parser.parse_args()
    pairs, extra = labelled_pairs(), training_only_pairs()
    featurized = featurize(pairs + extra)
    trains = [not held_out(p) for p in pairs] + [True] * len(extra)
    train = [(f, LABELS.index(p["sentiment"]), answer_of(p)) for p, (f, _), trains_on
             in zip(pairs + extra, featurized, trains) if trains_on and f]
    rows, y, answers = [f for f, _, _ in train], np.array([label for _, label, _ in train]), [a for _, _, a in train]
    vocabulary = vocabulary_of(rows)
    features = matrix(rows, vocabulary)
    cv = {c: cross_validate(features, y, answers, c) for c in C_GRID}
    c = max(C_GRID, key=lambda k: (round(cv[k], 4), -k))
    fitted = fit(features, y, c)
    weights = fitted.coef_.T  # one row per feature: positive, neutral, negative (LABELS' order)
    kept = {f: [round(float(w), 5) for w in weights[i]] for f, i in vocabulary.items()
            if np.abs(weights[i]).max() >= KEEP_WEIGHT}
    model = SentimentModel(FEATURE_VERSION, tuple(round(float(b), 5) for b in fitted.intercept_), kept, {})
    test = [(p, f, lexicon) for p, (f, lexicon) in zip(pairs, featurized) if held_out(p)]
    predicted = [model.predict(f)[0] if f else "neutral" for _, f, _ in test]
    model_scores = label_scores([(p["sentiment"], label) for (p, _, _), label in zip(test, predicted)], LABELS)
    lexicon_scores = label_scores([(p["sentiment"], lexicon) for p, _, lexicon in test], LABELS)
    by_language = {lang: {"pairs": sum(1 for p, _, _ in test if p["lang"] == lang), **{
        name: round(label_scores([(p["sentiment"], label) for (p, _, lex), m in zip(test, predicted)
                                  if p["lang"] == lang for label in [m if name == "model" else lex]],
                                 LABELS).accuracy, 4) for name in ("model", "lexicon")}}
        for lang in sorted({p["lang"] for p, _, _ in test})}
    trained = {"pairs": len(pairs), "training_only_pairs": len(extra), "training_pairs": len(train),
               "held_out_pairs": len(test), "c": c,
               "cross_validated_macro_f1": {str(k): round(v, 4) for k, v in cv.items()},
               "held_out": {"model": model_scores.as_json(), "lexicon": lexicon_scores.as_json(),
                            "by_language_accuracy": by_language},
               "features": len(kept), "fit": "scikit-learn LogisticRegression (lbfgs), folds by answer"}
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
