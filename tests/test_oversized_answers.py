"""A runaway answer is analysed only up to the cap: cleaning time per answer stays bounded."""

import json
import time
from pathlib import Path

from visibility_assets.clean.samples import RawAnswer, SampleCleaner
from visibility_assets.config import load_catalog

EVAL = Path(__file__).parent / "eval"


def _five_megabytes() -> RawAnswer:
    first = json.loads((EVAL / "answers.jsonl").read_text(encoding="utf-8").splitlines()[0])
    text = (first["answer"] + "\n") * (5_000_000 // (len(first["answer"]) + 1) + 1)
    return RawAnswer("k1", "2026-11-01", "qwen", "q001", first["question"], first["category"], 1, text)


def test_a_five_megabyte_answer_is_cleaned_in_under_a_second_and_flagged():
    answer = _five_megabytes()
    cleaner = SampleCleaner(load_catalog(EVAL / "brands.yaml"), "run-1")
    started = time.perf_counter()
    batch = cleaner.clean([answer])
    elapsed = time.perf_counter() - started
    (sample,) = batch.samples
    assert elapsed < 1.0
    assert sample["analysis_capped"] and sample["answer_chars"] == len(answer.answer_text) >= 5_000_000
    assert sample["valid"] and sample["brands_mentioned"] == 5  # what the first 100,000 characters name


def test_an_answer_within_the_cap_is_not_flagged():
    answer = _five_megabytes()
    short = RawAnswer(**{**answer.__dict__, "answer_text": answer.answer_text[:5_000]})
    (sample,) = SampleCleaner(load_catalog(EVAL / "brands.yaml"), "run-1").clean([short]).samples
    assert not sample["analysis_capped"] and sample["answer_chars"] == 5_000
