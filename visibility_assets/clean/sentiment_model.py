"""The learned sentiment: a small linear classifier of a brand's context, trained on hand-labelled
brand-answer pairs (tests/eval/SENTIMENT.md; scripts/train_sentiment_model.py makes the file).

What it reads of a brand (brand_features): the contexts of its mentions (clean/mention_context.py:
its option block, else its sentence or clause), with the brand written Ⓑ and every other tracked
brand Ⓞ, as character 1- to 3-grams; the lexicon's verdict, cue words and their balance
(clean/sentiment.py); its list rank and whether the answer advises against it. A multinomial
logistic regression over those features (each counted as often as it occurs, scaled by the square
root of their number)
gives the label. The lexicon's cues still explain it.
"""

from __future__ import annotations

import gzip
import json
import math
import re
from dataclasses import dataclass
from functools import cache
from importlib.resources import files

import numpy as np

from visibility_assets.clean.gram_index import GramIndex
from visibility_assets.clean.mention_context import mention_contexts

LABELS = ("positive", "neutral", "negative")
FEATURE_VERSION = "f1"
MODEL_FILE = "data/sentiment_model.json.gz"
OWN, OTHER = "\u24b7", "\u24c4"  # Ⓑ the brand, Ⓞ another tracked brand
NGRAMS = (1, 2, 3)
SPACE = re.compile(r"\s+")
ANSWER_NUMBER = re.compile(r"(\d+)-\d+$")


def held_out_pair(pair_id: str) -> bool:
    """The halves of the labelled pairs, fixed before any training: an answer with an even number
    (s012-3: 12, w4-017-2: 17) is held out, one with an odd number trains; an answer's pairs stay together."""
    return int(ANSWER_NUMBER.search(pair_id).group(1)) % 2 == 0


def brand_features(body: str, contexts: dict, hits, brand: str, result) -> list[str]:
    """The features of one mentioned brand, as text (the training's form; SentimentModel.predict_brand
    reads the same ones faster). contexts: mention_contexts of every accepted hit (with every hit
    as a cue, so each has one); hits: the accepted hits in text order; result: its BrandResult."""
    features = brand_signals(result)
    for text in context_texts(body, contexts, hits, brand):
        for n in NGRAMS:
            features += [f"c{n}:{text[i:i + n]}" for i in range(len(text) - n + 1)]
    return sorted(features)


def brand_signals(result) -> list[str]:
    """What the lexicon and the structure say of the brand: its verdict, cue words and their
    balance, its list rank and whether the answer advises against it."""
    cues = result.sentiment_cues
    positive = sum(1 for cue in cues if cue[0] == "+")
    negative = len(cues) - positive
    score = round(sum(m.score for m in result.mention_sentiments))
    balance = ("p" if positive >= 2 * negative else "n" if negative >= 2 * positive else "b") if cues else "0"
    rank = result.list_rank
    return [f"lex:{result.sentiment}", f"lexs:{max(-3, min(3, score))}", f"adv:{result.recommended is False}",
            f"rank:{rank if rank and rank < 4 else ('4+' if rank else 'none')}", f"rec:{result.recommended}",
            f"P={min(positive, 4)}", f"N={min(negative, 4)}", f"PN={max(-3, min(3, positive - negative))}",
            f"dom:{balance}", *("cue:" + cue for cue in cues),
            *("mlex:" + mention.label for mention in result.mention_sentiments)]


def context_texts(body: str, contexts: dict, hits, brand: str) -> list[str]:
    """The brand's contexts, each once, masked."""
    spans = sorted({contexts[h.start] for h in hits if h.brand == brand and contexts.get(h.start)})
    return [_masked(body, low, high, hits, brand) for low, high in spans]


def _masked(body: str, low: int, high: int, hits, brand: str) -> str:
    """The context with each tracked brand's name replaced by one mark."""
    pieces, position = [], low
    for hit in hits:
        if hit.start < position or hit.start >= high:
            continue
        pieces += [body[position:hit.start], OWN if hit.brand == brand else OTHER]
        position = min(hit.end, high)
    pieces.append(body[position:high])
    return "^" + SPACE.sub(" ", "".join(pieces)) + "$"


def features_of(body: str, hits, brands: dict, contexts: dict) -> dict[str, list[str]]:
    """Every mentioned brand's features, from the lexicon's labels (before any relabelling)."""
    return {name: brand_features(body, contexts, hits, name, result) for name, result in brands.items()}


def all_contexts(body: str, hits) -> dict:
    """Every accepted hit's context (clean/mention_context.py)."""
    starts = sorted({hit.start for hit in hits})
    return mention_contexts(body, starts, starts)  # every hit its own cue: each has a context


def _gram_keys(groups: list[list[str]]) -> tuple[np.ndarray, np.ndarray]:
    """Every 1- to 3-gram of each group's texts, each as one number (its code points in 21-bit
    fields, the first highest, so a 1-gram and the 2-gram it starts differ), with the index of its
    group. All texts are joined by "\\0" (no text holds one), and the n-grams that hold it left out."""
    texts = [text for group in groups for text in group]
    if not texts:
        return np.zeros(0, dtype=np.uint64), np.zeros(0, dtype=np.int64)
    owner = np.repeat(np.arange(len(groups)), [sum(len(t) + 1 for t in group) for group in groups])[:-1]
    points = np.frombuffer("\0".join(texts).encode("utf-32-le"), dtype=np.uint32).astype(np.uint64)
    present = points != 0
    both = present[:-1] & present[1:]
    three = both[:-1] & present[2:]
    first = points << np.uint64(42)
    second = first[:-1] | (points[1:] << np.uint64(21))
    keys = np.concatenate([first[present], second[both], (second[:-1] | points[2:])[three]])
    return keys, np.concatenate([owner[present], owner[:-1][both], owner[:-2][three]])


def gram_key(gram: str) -> int:
    return sum(ord(char) << (42 - 21 * i) for i, char in enumerate(gram))


@dataclass(frozen=True, eq=False)
class SentimentModel:
    feature_version: str
    bias: tuple[float, float, float]
    weights: dict  # feature -> (positive, neutral, negative) weights
    trained: dict  # how it was trained and what it measured (scripts/train_sentiment_model.py)

    def predict_brands(self, groups: list[list[str]], signals: list[list[str]]) -> list[str]:
        """The label of each brand from its masked contexts and its signals: predict's answer for
        brand_features, with every brand's n-grams made and looked up at once, as numbers."""
        keys, owner = _gram_keys(groups)
        index, weights = self._grams
        size = len(groups)
        totals = np.zeros((size, 3))
        if len(keys):
            rows = index.rows(keys)
            found = rows >= 0
            known_weights, known_owner = weights[rows[found]], owner[found]
            for k in range(3):
                totals[:, k] = np.bincount(known_owner, weights=known_weights[:, k], minlength=size)
        counts = np.bincount(owner, minlength=size).tolist()
        labels = []
        weight_of = self.weights.get
        bias_positive, bias_neutral, bias_negative = self.bias
        for (positive, neutral, negative), brand_signals_, count in zip(totals.tolist(), signals, counts):
            for found_weights in map(weight_of, brand_signals_):
                if found_weights is not None:
                    positive += found_weights[0]
                    neutral += found_weights[1]
                    negative += found_weights[2]
            scale = 1 / math.sqrt(max(count + len(brand_signals_), 1))
            z = (bias_positive + scale * positive, bias_neutral + scale * neutral, bias_negative + scale * negative)
            labels.append(LABELS[z.index(max(z))])
        return labels

    @property
    def _grams(self) -> tuple[GramIndex, np.ndarray]:
        """The n-gram features' index (key -> row) and their weights, one row each (built once)."""
        built = self.__dict__.get("_built")
        if built is None:
            grams = [(gram_key(f[3:]), w) for f, w in self.weights.items() if f[0] == "c" and f[2] == ":"]
            keys = np.array([k for k, _ in grams], dtype=np.uint64)
            built = (GramIndex(keys), np.array([w for _, w in grams], dtype=float).reshape(-1, 3))
            object.__setattr__(self, "_built", built)
        return built

    def predict(self, features: list[str]) -> tuple[str, float]:
        """The label and its probability, from brand_features (a feature counts each time it occurs)."""
        found = [w for w in map(self.weights.get, features) if w is not None]
        scale = 1 / math.sqrt(max(len(features), 1))
        z = [self.bias[k] + scale * sum(w[k] for w in found) for k in range(3)]
        top = max(z)
        exp = [math.exp(v - top) for v in z]
        best = max(range(3), key=z.__getitem__)
        return LABELS[best], exp[best] / sum(exp)

    def relabel(self, body: str, hits, brands: dict, contexts: dict) -> None:
        """Each mentioned brand's sentiment as the model labels it (its cues stay the lexicon's,
        which explain it); every brand's features from the lexicon's labels, before any changes.
        contexts: all_contexts."""
        names = list(brands)
        labels = self.predict_brands([context_texts(body, contexts, hits, name) for name in names],
                                     [brand_signals(brands[name]) for name in names])
        for name, label in zip(names, labels):
            brands[name].sentiment = label

    def to_json(self) -> dict:
        return {"feature_version": self.feature_version, "labels": list(LABELS), "bias": list(self.bias),
                "weights": self.weights, "trained": self.trained}


def read_model(data: dict) -> SentimentModel:
    if data.get("feature_version") != FEATURE_VERSION or tuple(data.get("labels", ())) != LABELS:
        raise ValueError(f"the sentiment model is for features {data.get('feature_version')!r},"
                         f" not {FEATURE_VERSION!r}")
    return SentimentModel(data["feature_version"], tuple(data["bias"]),
                          {k: tuple(v) for k, v in data["weights"].items()}, data.get("trained", {}))


@cache
def shipped_model() -> SentimentModel:
    """The model shipped with the package (a package without it is broken: say so, never fall
    back to other labels silently)."""
    resource = files("visibility_assets.clean").joinpath(MODEL_FILE)
    if not resource.is_file():
        raise FileNotFoundError(f"visibility_assets/clean/{MODEL_FILE} is missing from the installed package:"
                                " reinstall it, or train it with scripts/train_sentiment_model.py")
    return read_model(json.loads(gzip.decompress(resource.read_bytes())))
