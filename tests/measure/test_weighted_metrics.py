"""Demand-weighted metrics (questions.yaml `weight`): the weighted mention rate is the
weight-averaged mention rate of the questions, and its 95% interval (Wilson at Kish's effective
sample size) covers the true weighted rate at the nominal rate over repeated samples of known
truth; the plain rate, which weighs every answer alike, does not."""

import random

import pytest
from pytest import approx

from tests.sql_models_harness import DAY, Warehouse, brand_result, sample
from visibility_assets.core.partitions import Partition

# Per question: its weight (demand) and the true chance that an answer to it names brand A.
QUESTIONS = {"q1": (1.0, 0.7), "q2": (1.0, 0.9), "q3": (2.0, 0.3), "q4": (5.0, 0.6), "q5": (10.0, 0.2),
             "q6": (20.0, 0.15), "q7": (0.5, 0.8), "q8": (3.0, 0.4)}  # the most asked are named least
ROUNDS = 3
REPLICATES = 1000
TRUE_RATE = sum(w * p for w, p in QUESTIONS.values()) / sum(w for w, _ in QUESTIONS.values())


def simulated(replicates: int, seed: int = 11) -> list[dict]:
    """The metrics of brand A over `replicates` independent days of answers (a platform each)."""
    rng = random.Random(seed)
    warehouse, partitions = Warehouse(), []
    samples, results = [], []
    for replicate in range(replicates):
        platform = f"p{replicate}"
        partitions.append(Partition(DAY, platform))
        for question, (weight, chance) in QUESTIONS.items():
            for round_ in range(ROUNDS):
                key = f"{platform}-{question}-{round_}"
                samples.append(sample(key, platform=platform, question_id=question, question_weight=weight,
                                      round=round_ + 1))
                mentioned = rng.random() < chance
                results.append(brand_result(key, "A", platform=platform, mentioned=mentioned))
                results.append(brand_result(key, "B", platform=platform, mentioned=not mentioned))
    warehouse.insert("cleaned_samples", samples).insert("sample_brand_results", results)
    rows = warehouse.build("fct_mention_metrics", partitions)
    assert not any(warehouse.failing_checks(partitions[:3]).values())
    return [row for row in rows if row["brand"] == "A"]


@pytest.fixture(scope="module")
def metrics() -> list[dict]:
    return simulated(REPLICATES)


@pytest.mark.slow  # over a second by design
def test_the_weighted_interval_covers_the_true_weighted_rate_at_the_nominal_rate(metrics):
    covered = sum(r["weighted_mention_rate_low"] <= TRUE_RATE <= r["weighted_mention_rate_high"] for r in metrics)
    # 95% nominal; 1,000 replicates put the Monte Carlo error near 0.007. Kish's effective size
    # ignores the gain of sampling every question (stratum), so the interval errs on the wide side.
    assert 0.935 <= covered / len(metrics) <= 0.995
    mean = sum(r["weighted_mention_rate"] for r in metrics) / len(metrics)
    assert mean == approx(TRUE_RATE, abs=0.01)  # unbiased


def test_the_plain_rate_weighs_every_answer_alike_and_misses_the_demand_weighted_truth(metrics):
    plain = sum(r["mention_rate_low"] <= TRUE_RATE <= r["mention_rate_high"] for r in metrics) / len(metrics)
    weighted = sum(r["weighted_mention_rate_low"] <= TRUE_RATE <= r["weighted_mention_rate_high"]
                   for r in metrics) / len(metrics)
    assert plain < weighted - 0.1


def test_one_day_of_known_answers_gives_the_weighted_rate_share_of_voice_and_effective_size():
    warehouse = Warehouse()
    # q1 (weight 1): 2 valid answers, A in one; q2 (weight 3): 1 valid answer naming A and B, 1 invalid.
    warehouse.insert("cleaned_samples", [
        sample("a", question_id="q1", question_weight=1.0), sample("b", question_id="q1", question_weight=1.0),
        sample("c", question_id="q2", question_weight=3.0),
        sample("d", question_id="q2", question_weight=3.0, valid=False, invalid_reason="refusal")])
    warehouse.insert("sample_brand_results", [
        brand_result("a", "A", mentioned=True), brand_result("b", "A"), brand_result("c", "A", mentioned=True),
        brand_result("d", "A", valid=False), brand_result("a", "B"), brand_result("b", "B"),
        brand_result("c", "B", mentioned=True), brand_result("d", "B", valid=False)])
    rows = {r["brand"]: r for r in warehouse.build("fct_mention_metrics", [Partition(DAY, "deepseek")])}
    a, b = rows["A"], rows["B"]
    assert a["weighted_mention_rate"] == approx((1 * 0.5 + 3 * 1.0) / 4)  # the questions' rates, weighed
    assert a["mention_rate"] == approx(2 / 3)  # every answer alike
    assert a["effective_answers"] == approx(4 ** 2 / (0.5 ** 2 * 2 + 3 ** 2))
    assert b["weighted_mention_rate"] == approx(3 / 4)
    assert a["weighted_share_of_voice"] == approx(3.5 / (3.5 + 3))


def test_equal_weights_give_the_plain_rate_and_its_wilson_interval():
    warehouse = Warehouse()
    warehouse.insert("cleaned_samples", [sample(f"k{i}", question_id=f"q{i % 4}") for i in range(12)])
    warehouse.insert("sample_brand_results", [brand_result(f"k{i}", "A", mentioned=i % 3 == 0) for i in range(12)])
    (row,) = warehouse.build("fct_mention_metrics", [Partition(DAY, "deepseek")])
    assert row["effective_answers"] == approx(12)
    assert (row["weighted_mention_rate"], row["weighted_mention_rate_low"], row["weighted_mention_rate_high"]) == (
        approx(row["mention_rate"]), approx(row["mention_rate_low"]), approx(row["mention_rate_high"]))
