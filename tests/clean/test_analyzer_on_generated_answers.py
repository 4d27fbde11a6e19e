"""The analyzer against the simulator's own ground truth, on a few thousand generated answers.

tests/eval holds 208 hand-labelled answers: precise, but few, and written once. The
simulator writes answers in every layout, language and platform style the pipeline meets
in the demo and the benchmarks, with traps for substring matchers, and it knows what it
wrote (``compose_answer_detailed``): the kind of answer, the brands it listed as options
in list order, every brand it wrote, the brand it advised against, the brands that appear
only in a URL. That truth is mechanical, so it checks the analyzer on volume, beside the
gold set's judgement calls.

The generator's truth and the analyzer's contract differ in places, so each check asserts
only what the truth determines:

- ``mentioned`` counts names in <think> blocks and reference blocks, which the analyzer
  leaves out of scope. So the analyzer's mentions must be a subset of it (precision), and
  equal to it only for answers with neither (no think block, not cited).
- Options are written in the list's leads, so each is found, and in list layouts ranked in
  list order: exactly 1..k when the list holds no untracked option, increasing otherwise.
  Prose has no list, so nothing is ranked.
- A brand advised against is "not recommended" when it is not ranked: an unlisted brand, or
  any brand in a prose answer. Every other mentioned brand stays recommended.

The thresholds are the rates measured on this corpus (seed 7, 3,000 answers) with some
margin; the known misses, left as they are, are:

- a bold reference heading ("**Sources**", "**参考资料**") starts with "*" and reads as a
  bullet, so the reference block is not recognised: its numbered entries become the primary
  list of a prose answer, and brands named only there count as mentions;
- "X价格偏高，不推荐作为首选" is not read as advice against X;
- the 苹果 of "就像苹果和橘子不能直接比较" counts as the phone brand;
- a very short single-option answer in English can be judged irrelevant.
"""

from __future__ import annotations

import random
from collections import Counter
from functools import cache

from visibility_assets.clean.analyzer import Analyzer
from visibility_assets.config import EXAMPLE_CONFIG_DIR, load_config
from visibility_assets.tools.simulator.answers import KNOWN_PLATFORMS, compose_answer_detailed, sim_brands_by_category

ANSWERS = 3000
SEED = 7


@cache
def corpus(seed: int = SEED, answers: int = ANSWERS) -> tuple:
    """(ground truth, analysis) of generated answers: the example questions, each with its
    category's brands, over the known platforms and a month of days."""
    config = load_config(EXAMPLE_CONFIG_DIR)
    brands = sim_brands_by_category(config.catalog)
    analyzer = Analyzer(config.catalog)
    rng = random.Random(seed)
    rows = []
    for i in range(answers):
        question = config.questions[i % len(config.questions)]
        platform = KNOWN_PLATFORMS[(i // len(config.questions)) % len(KNOWN_PLATFORMS)]
        truth = compose_answer_detailed(rng, question.text, brands[question.category], platform,
                                        f"2025-03-{1 + i % 28:02d}")
        rows.append((truth, analyzer.analyze(truth.text, question.text, question.category)))
    return tuple(rows)


def measure(rows) -> dict[str, float]:
    """Every rate the tests below assert, by name."""
    hits, totals = Counter(), Counter()

    def count(name: str, ok: bool, weight: int = 1) -> None:
        hits[name] += ok * weight
        totals[name] += weight

    for truth, analysis in rows:
        if truth.kind != "answer":
            count(f"invalid:{truth.kind}", (analysis.valid, analysis.invalid_reason) == (False, truth.kind))
            continue
        count("valid", analysis.valid)
        _count_mentions(count, truth, set(analysis.mentioned))
        _count_ranks(count, truth, {name: r.list_rank for name, r in analysis.mentioned.items()})
        _count_advice(count, truth, analysis)
        _count_untracked(count, truth, analysis)
    return {name: hits[name] / totals[name] for name in totals}


def _count_mentions(count, truth, found: set[str]) -> None:
    written = set(truth.mentioned)
    count("mention_precision", True, len(found & written))
    count("mention_precision", False, len(found - written))
    count("url_only_unmentioned", not set(truth.url_only) & found)
    count("option_recall", True, len(set(truth.options) & found))
    count("option_recall", False, len(set(truth.options) - found))
    count("advised_found", set(truth.advised_against) <= found)
    if not truth.has_think and not truth.cited:
        count("mentions_exact", found == written)


def _count_ranks(count, truth, ranks: dict[str, int | None]) -> None:
    ranked = {name for name, rank in ranks.items() if rank is not None}
    if truth.structure == "prose":
        count("prose_unranked", not ranked)
        return
    order = [ranks.get(name) for name in truth.options]
    only_options = ranked <= set(truth.options)  # sub-bullets and summaries name brands unranked
    if truth.other_options:  # untracked options take positions too: only the order is known
        count("ranks_in_order", None not in order and order == sorted(set(order)) and only_options)
    else:
        count("ranks_exact", order == list(range(1, len(order) + 1)) and only_options)


def _count_advice(count, truth, analysis) -> None:
    for name, result in analysis.mentioned.items():
        if name not in truth.advised_against:
            count("others_recommended", result.recommended)
        elif name not in truth.options:  # advised against in a paragraph that names it
            count(f"unlisted_advised_not_recommended:{truth.language}", not result.recommended)
        elif truth.structure != "prose":  # ranked, so recommended whatever the advice
            count("others_recommended", result.recommended)
        # a listed brand of a prose answer may be advised against by pronoun ("avoid it"), which
        # the analyzer rightly ignores, or by name: the truth does not say which


def _count_untracked(count, truth, analysis) -> None:
    """Discovery (clean/untracked.py): a list's untracked products are named, its generic labels
    ("其他厂商", "Self-hosted") never; prose has no list to offer them in."""
    found = [name.name for name in analysis.untracked]
    if truth.structure == "prose" or not truth.options:
        count("untracked_only_in_lists", not found)
        return
    count("untracked_precision", True, len(set(found) & set(truth.other_brands)))
    count("untracked_precision", False, len(set(found) - set(truth.other_brands)))
    count("untracked_recall", True, len(set(truth.other_brands) & set(found)))
    count("untracked_recall", False, len(set(truth.other_brands) - set(found)))


@cache
def rates() -> dict[str, float]:
    return measure(corpus())


def assert_at_least(floors: dict[str, float]) -> None:
    measured = rates()
    report = {name: round(rate, 4) for name, rate in sorted(measured.items())}
    for name, floor in floors.items():
        assert measured[name] >= floor, (name, report)


def test_the_corpus_covers_every_kind_and_layout():
    truths = [truth for truth, _ in corpus()]
    assert {t.kind for t in truths} == {"answer", "refusal", "empty", "error", "irrelevant"}
    assert {t.structure for t in truths if t.kind == "answer"} == {
        "numbered", "bullets", "table", "headings", "bold_lines", "prose"}
    assert sum(t.has_think for t in truths) > 100 and sum(t.cited for t in truths) > 500
    assert sum(bool(t.url_only) for t in truths) > 100 and sum(bool(t.advised_against) for t in truths) > 100


def test_refusals_empties_and_errors_are_invalid_for_that_reason():
    # the generator picks them from fixed lists, every one of which the analyzer recognises
    assert_at_least({"invalid:refusal": 1.0, "invalid:empty": 1.0, "invalid:error": 1.0})
    # an apple pie recipe answering a phone question reads as an answer about 苹果 now and then
    assert_at_least({"invalid:irrelevant": 0.9, "valid": 0.995})


def test_mentions_are_brands_the_answer_wrote():
    assert_at_least({"mention_precision": 0.998, "url_only_unmentioned": 0.995})


def test_listed_and_advised_brands_are_found():
    assert_at_least({"option_recall": 0.998, "advised_found": 0.995})


def test_mentions_equal_the_truth_when_nothing_is_out_of_scope():
    assert_at_least({"mentions_exact": 0.99})


def test_list_ranks_follow_the_list_and_prose_has_none():
    assert_at_least({"ranks_exact": 0.995, "ranks_in_order": 0.995, "prose_unranked": 0.97})


def test_advice_against_an_unlisted_brand_makes_it_not_recommended():
    assert_at_least({"others_recommended": 0.995, "unlisted_advised_not_recommended:en": 0.98,
                     # one template in five, "X价格偏高，不推荐作为首选", is missed
                     "unlisted_advised_not_recommended:zh": 0.7})


def test_untracked_products_of_a_list_are_discovered_and_generic_labels_are_not():
    assert_at_least({"untracked_precision": 0.99, "untracked_recall": 0.95, "untracked_only_in_lists": 0.99})
