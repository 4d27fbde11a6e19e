"""The learned sentiment (clean/sentiment_model.py): the fast path reads the features the model was
trained on, the file's figures are the ones the product prints, and the model decides the label."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from visibility_assets.clean.analyzer import Analyzer
from visibility_assets.clean.sentiment_model import LABELS, _gram_keys, gram_key, held_out_pair, shipped_model
from visibility_assets.config import load_catalog
from visibility_assets.review.shipped_accuracy import SENTIMENT_HELD_OUT

EVAL = Path(__file__).parents[1] / "eval"


@pytest.fixture(scope="module")
def answers() -> list[dict]:
    lines = (EVAL / "sentiment.jsonl").read_text(encoding="utf-8").splitlines()
    return list({(p["answer"], p["question"], p["category"]): p for p in map(json.loads, lines)}.values())


def test_the_analyzer_labels_as_the_model_does_on_the_features_it_was_trained_on(answers):
    catalog = load_catalog(EVAL / "brands.yaml")
    lexicon, learned, model = Analyzer(catalog, sentiment_model=None), Analyzer(catalog), shipped_model()
    compared = differs_from_lexicon = 0
    for item in answers:
        seen = lexicon.analyze(item["answer"], item["question"], item["category"], with_features=True)
        labelled = learned.analyze(item["answer"], item["question"], item["category"])
        for brand, features in seen.sentiment_features.items():
            if labelled.mentioned[brand].named_unknown:
                continue
            assert labelled.mentioned[brand].sentiment == model.predict(features)[0], (item["id"], brand)
            assert labelled.mentioned[brand].sentiment_cues == seen.mentioned[brand].sentiment_cues  # cues explain
            compared += 1
            differs_from_lexicon += labelled.mentioned[brand].sentiment != seen.mentioned[brand].sentiment
    assert compared > 600 and differs_from_lexicon > 50


def test_the_shipped_model_carries_the_figures_the_product_prints():
    trained = shipped_model().trained
    model, lexicon = trained["held_out"]["model"], trained["held_out"]["lexicon"]
    assert (trained["held_out_pairs"], round(model["accuracy"], 3), round(model["macro_f1"], 3),
            round(lexicon["accuracy"], 3)) == (SENTIMENT_HELD_OUT.pairs, SENTIMENT_HELD_OUT.accuracy,
                                               SENTIMENT_HELD_OUT.macro_f1, SENTIMENT_HELD_OUT.lexicon_accuracy)
    assert trained["pairs"] >= 3000 and set(trained["held_out"]["by_language_accuracy"]) == {"zh", "zh-Hant", "en"}


def test_the_n_grams_are_counted_within_each_text_never_across_two():
    keys, owner = _gram_keys([["ab", "c"], ["d"]])
    grams = {"a", "b", "c", "ab"}
    assert sorted(zip(owner.tolist(), keys.tolist())) == sorted(
        [(0, gram_key(g)) for g in grams] + [(1, gram_key("d"))])
    assert len({gram_key(g) for g in ("a", "ab", "abc", "b", "bc")}) == 5


def test_the_halves_keep_an_answers_pairs_together_by_its_number():
    assert held_out_pair("s012-3") and held_out_pair("w4-018-1") and not held_out_pair("w4-017-2")
    assert LABELS == ("positive", "neutral", "negative")
