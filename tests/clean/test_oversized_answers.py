"""A runaway answer is analysed only up to the cap, so cleaning time per answer stays bounded
(`visibility bench clean` times it: oversized_answer_s)."""

import json
from pathlib import Path

from visibility_assets.clean.samples import RawAnswer, SampleCleaner
from visibility_assets.config import load_catalog
from visibility_assets.config.schema import MAX_ANSWER_CHARS

EVAL = Path(__file__).parents[1] / "eval"


def _five_megabytes() -> RawAnswer:
    first = json.loads((EVAL / "answers.jsonl").read_text(encoding="utf-8").splitlines()[0])
    text = (first["answer"] + "\n") * (5_000_000 // (len(first["answer"]) + 1) + 1)
    return RawAnswer("k1", "2026-11-01", "qwen", "q001", first["question"], first["category"], 1, text)


def test_a_five_megabyte_answer_is_analysed_only_up_to_the_cap_and_flagged():
    answer = _five_megabytes()
    cleaner = SampleCleaner(load_catalog(EVAL / "brands.yaml"), "run-1")
    batch = cleaner.clean([answer])
    (sample,) = batch.samples
    assert sample["analysis_capped"] and sample["answer_chars"] == len(answer.answer_text) >= 5_000_000
    assert sample["valid"] and sample["brands_mentioned"] == 5  # what the first 100,000 characters name
    assert max(m["end_pos"] for m in batch.matches) <= MAX_ANSWER_CHARS  # nothing past the cap was read
    capped = RawAnswer(**{**answer.__dict__, "answer_text": answer.answer_text[:MAX_ANSWER_CHARS]})
    (prefix,) = SampleCleaner(load_catalog(EVAL / "brands.yaml"), "run-1").clean([capped]).samples
    assert {k: sample[k] for k in ("valid", "brands_mentioned", "citations", "option_list_kind")} == \
        {k: prefix[k] for k in ("valid", "brands_mentioned", "citations", "option_list_kind")}


def test_an_answer_within_the_cap_is_not_flagged():
    answer = _five_megabytes()
    short = RawAnswer(**{**answer.__dict__, "answer_text": answer.answer_text[:5_000]})
    (sample,) = SampleCleaner(load_catalog(EVAL / "brands.yaml"), "run-1").clean([short]).samples
    assert not sample["analysis_capped"] and sample["answer_chars"] == 5_000
