"""The SQL models' logic on an in-memory DuckDB (tests/sql_models_harness.py): source rows in,
each model's rows out, checked against values computed here from the rows. Milliseconds each;
what needs Dagster (asset checks, planned range runs, the report) is in test_metrics.py."""

from __future__ import annotations

import math
from datetime import timedelta

import duckdb
import pytest

from tests.sql_models_harness import (
    DAY,
    NOON,
    RUN_ID,
    Warehouse,
    answers,
    benjamini_hochberg,
    brand_result,
    copy_project,
    named,
    response,
    sample,
    shipped_project,
    two_proportion,
    wilson,
)
from tests.sql_models_harness import row as source_row
from visibility_assets.core.partitions import Partition
from visibility_assets.measure.project import PROJECT_DIR, ModelError, load_project
from visibility_assets.measure.runner import create_macros
from visibility_assets.measure.sources import ensure_sources
from visibility_assets.warehouse.db import ensure_table, existing_tables, insert_batch
from visibility_assets.warehouse.schema import Table
from visibility_assets.warehouse.tables import TABLES

HERE = Partition(DAY, "deepseek")
approx = pytest.approx

# (valid, invalid_reason, has_citation, {brand: (mentioned, list_rank, recommended, cites_own_domain, sentiment)})
ANSWERS = [
    (True, None, True, {"A": (True, 1, True, True, "positive"), "B": (True, 2, True, False, "neutral")}),
    (True, None, False, {"A": (True, 3, True, False, "positive")}),
    (True, None, True, {"B": (True, 1, True, False, "positive"), "C": (True, None, False, False, "negative")}),
    (True, None, False, {"A": (True, None, False, False, "negative")}),
    (True, None, False, {}),
    (False, "refusal", False, {}),
]
VALID, MENTIONS = 5, {"A": 3, "B": 2, "C": 1}


def by(rows: list[dict], *keys: str) -> dict:
    return {row[keys[0]] if len(keys) == 1 else tuple(row[k] for k in keys): row for row in rows}


# --- fct_mention_metrics, int_brand_daily, mention_metrics ------------------------------------

@pytest.fixture(scope="module")
def metrics_warehouse() -> Warehouse:
    warehouse = Warehouse()
    answers(warehouse, ANSWERS)
    warehouse.build("mention_metrics", [HERE])
    return warehouse


@pytest.fixture(scope="module")
def metrics(metrics_warehouse) -> dict[str, dict]:
    return by(metrics_warehouse.rows("fct_mention_metrics"), "brand")


@pytest.mark.parametrize("brand", sorted(MENTIONS))
def test_answers_valid_answers_and_mentions_are_counted_per_brand(metrics, brand):
    row = metrics[brand]
    assert (row["answers"], row["valid_answers"], row["mentioned_answers"]) == (6, VALID, MENTIONS[brand])
    assert (row["date"], row["platform"], row["category"]) == (DAY, "deepseek", "cat")


@pytest.mark.parametrize("brand", sorted(MENTIONS))
def test_the_mention_rate_is_over_valid_answers_with_its_wilson_interval(metrics, brand):
    row, x = metrics[brand], MENTIONS[brand]
    low, high = wilson(x, VALID)
    assert row["mention_rate"] == approx(x / VALID)
    assert (row["mention_rate_low"], row["mention_rate_high"]) == (approx(low), approx(high))


@pytest.mark.parametrize("brand", sorted(MENTIONS))
def test_share_of_voice_is_the_brands_mentions_over_its_categorys(metrics, brand):
    assert metrics[brand]["share_of_voice"] == approx(MENTIONS[brand] / sum(MENTIONS.values()))


def test_the_average_list_rank_is_over_the_answers_that_rank_the_brand(metrics):
    assert metrics["A"]["avg_list_rank"] == approx(2.0) and metrics["B"]["avg_list_rank"] == approx(1.5)
    assert metrics["C"]["avg_list_rank"] is None


@pytest.mark.parametrize(("brand", "top1", "top3"), [("A", 1 / 5, 2 / 5), ("B", 1 / 5, 2 / 5), ("C", 0.0, 0.0)])
def test_top1_and_top3_rates_are_over_valid_answers(metrics, brand, top1, top3):
    assert (metrics[brand]["top1_rate"], metrics[brand]["top3_rate"]) == (approx(top1), approx(top3))


@pytest.mark.parametrize(("brand", "recommend", "negative"),
                         [("A", 2 / 5, 1 / 5), ("B", 2 / 5, 0.0), ("C", 0.0, 1 / 5)])
def test_recommend_and_negative_rates_count_recommended_true_and_false(metrics, brand, recommend, negative):
    assert (metrics[brand]["recommend_rate"], metrics[brand]["negative_rate"]) == (approx(recommend), approx(negative))


@pytest.mark.parametrize(("brand", "cited", "own"), [("A", 1 / 3, 1 / 3), ("B", 2 / 2, 0.0), ("C", 1 / 1, 0.0)])
def test_citation_rates_are_over_the_answers_naming_the_brand(metrics, brand, cited, own):
    assert metrics[brand]["citation_rate"] == approx(cited)
    assert metrics[brand]["own_domain_citation_rate"] == approx(own)


@pytest.mark.parametrize(("brand", "positive", "negative"), [("A", 2, 1), ("B", 1, 0), ("C", 0, 1)])
def test_sentiment_rates_are_over_the_answers_naming_the_brand_with_intervals(metrics, brand, positive, negative):
    row, n = metrics[brand], MENTIONS[brand]
    for column, x in (("positive_rate", positive), ("negative_sentiment_rate", negative)):
        low, high = wilson(x, n)
        assert (row[column], row[column + "_low"], row[column + "_high"]) == (approx(x / n), approx(low), approx(high))


def test_a_brand_named_only_to_say_nothing_is_known_counts_as_a_mention_apart_and_not_in_the_sentiment():
    warehouse = Warehouse()
    keys = answers(warehouse, [(True, None, False, {"A": (True, None, True, False, "positive")}),
                               (True, None, False, {"A": (True, None, True, False, "negative")}),
                               (True, None, False, {"A": (True, None, None, False)})], brands="A")
    for result in warehouse.pending["sample_brand_results"]:
        result["named_unknown"] = result["request_key"] == keys[2]  # "我没有找到关于A的可靠信息"
    (row,) = warehouse.build("mention_metrics", [HERE])
    assert (row["mentioned_answers"], row["named_unknown_answers"], row["known_mentioned_answers"]) == (3, 1, 2)
    assert (row["mention_rate"], row["recommend_rate"]) == (approx(1.0), approx(2 / 3))
    assert (row["positive_rate"], row["negative_sentiment_rate"]) == (approx(1 / 2), approx(1 / 2))


def test_a_reviewed_label_replaces_the_machines_and_the_figure_says_it_was_reviewed():
    warehouse = Warehouse()
    keys = answers(warehouse, [(True, None, False, {"A": (True, None, True, False, "positive")}),
                               (True, None, False, {"A": (True, None, True, False, "positive")}),
                               (True, None, False, {})], brands="A")
    # A reviewer removes the first answer's false mention and finds the second one negative.
    warehouse.insert("label_reviews", [
        {"request_key": keys[0], "date": HERE.date, "platform": HERE.platform, "brand": "A", "mentioned": False,
         "mention_count": 0, "reviewer": "ana", "reviewers": 1},
        {"request_key": keys[1], "date": HERE.date, "platform": HERE.platform, "brand": "A", "mentioned": True,
         "mention_count": 1, "recommended": True, "sentiment": "negative", "reviewer": "ana", "reviewers": 1}])
    (row,) = warehouse.build("mention_metrics", [HERE])
    assert (row["mentioned_answers"], row["valid_answers"], row["reviewed_answers"]) == (1, 3, 2)
    assert row["mention_rate"] == approx(1 / 3)  # the false mention left the rate of its day
    assert (row["negative_sentiment_rate"], row["review_labelled_answers"], row["sentiment_source"]) == \
        (approx(1.0), 1, "review")


def test_each_metric_row_carries_its_lineage(metrics):
    for row in metrics.values():
        assert (row["config_version"], row["analyzer_version"]) == ("cfg1", "1.0.0")
        assert (row["samples_run_id"], row["run_id"]) == ("clean-run", RUN_ID)


def test_int_brand_daily_counts_what_the_rates_are_made_of(metrics_warehouse):
    daily = by(metrics_warehouse.rows("int_brand_daily"), "brand")
    counts = ("listed_answers", "top1_answers", "top3_answers", "recommended_answers", "negative_answers",
              "positive_sentiment_answers", "negative_sentiment_answers", "cited_answers", "own_domain_cited_answers")
    assert {b: tuple(daily[b][c] for c in counts) for b in daily} == {
        "A": (2, 1, 2, 2, 1, 2, 1, 1, 1), "B": (2, 1, 2, 2, 0, 1, 0, 2, 0), "C": (0, 0, 0, 0, 1, 0, 1, 1, 0)}


def test_mention_metrics_is_the_mart_under_the_name_users_query(metrics_warehouse):
    assert metrics_warehouse.rows("mention_metrics") == metrics_warehouse.rows("fct_mention_metrics")


def test_a_partition_without_valid_answers_has_counts_and_no_rates():
    warehouse = Warehouse()
    answers(warehouse, [(False, "refusal", False, {}), (False, "error", False, {})], brands="A")
    (row,) = warehouse.build("fct_mention_metrics", [HERE])
    assert (row["answers"], row["valid_answers"], row["mentioned_answers"]) == (2, 0, 0)
    rates = ("mention_rate", "mention_rate_low", "mention_rate_high", "share_of_voice", "top1_rate", "top3_rate",
             "recommend_rate", "negative_rate", "positive_rate", "citation_rate")
    assert [row[c] for c in rates] == [None] * len(rates)


def test_share_of_voice_compares_a_brand_only_with_its_own_category():
    warehouse = Warehouse()
    answers(warehouse, named({"A": 3, "B": 1}, total=4), brands="AB", category="phones")
    answers(warehouse, named({"C": 1, "D": 1}, total=4), brands="CD", category="clouds")
    shares = {row["brand"]: row["share_of_voice"] for row in warehouse.build("fct_mention_metrics", [HERE])}
    assert shares == {"A": approx(3 / 4), "B": approx(1 / 4), "C": approx(1 / 2), "D": approx(1 / 2)}


def test_the_lineage_of_a_partition_cleaned_twice_is_its_latest_version():
    warehouse = Warehouse()
    warehouse.insert("cleaned_samples", [sample("k1", config_version="cfg1", analyzer_version="1.0.0"),
                                         sample("k2", config_version="cfg2", analyzer_version="1.1.0")])
    warehouse.insert("sample_brand_results", [brand_result("k1", "A"), brand_result("k2", "A")])
    (row,) = warehouse.build("fct_mention_metrics", [HERE])
    assert (row["config_version"], row["analyzer_version"]) == ("cfg2", "1.1.0")


def test_rebuilding_a_partition_leaves_the_table_identical_and_the_other_partitions_alone():
    warehouse = Warehouse()
    for platform in ("deepseek", "qwen"):
        answers(warehouse, ANSWERS, platform=platform)
    both = [HERE, Partition(DAY, "qwen")]
    warehouse.build("fct_mention_metrics", both, run_id="first")
    before = warehouse.rows("fct_mention_metrics", exclude=["run_id"])
    warehouse.build("fct_mention_metrics", [HERE], run_id="second")
    assert warehouse.rows("fct_mention_metrics", exclude=["run_id"]) == before and len(before) == 6
    runs = {(r["platform"], r["run_id"]) for r in warehouse.rows("fct_mention_metrics")}
    assert runs == {("deepseek", "second"), ("qwen", "first")}


def test_a_run_builds_only_its_own_partitions():
    warehouse = Warehouse()
    answers(warehouse, ANSWERS)
    answers(warehouse, ANSWERS, day=DAY + timedelta(days=1))
    answers(warehouse, ANSWERS, platform="qwen")
    built = {(r["date"], r["platform"]) for r in warehouse.build("fct_mention_metrics", [HERE])}
    assert built == {(DAY, "deepseek")}


def test_canary_answers_never_reach_the_brand_staging_views():
    warehouse = Warehouse()
    answers(warehouse, ANSWERS[:2])
    warehouse.insert("cleaned_samples", [sample("canary-1", category="canary")])
    rows = warehouse.build("stg_samples")
    assert sorted(r["category"] for r in rows) == ["cat", "cat"]
    assert {r["samples_run_id"] for r in rows} == {"clean-run"}  # the cleaning run, under its own name


# --- fct_invalid_answers ------------------------------------------------------------------------

def test_invalid_answers_count_each_reason_per_partition(metrics_warehouse):
    rows = metrics_warehouse.build("fct_invalid_answers", [HERE])
    assert {r["reason"]: r["answers"] for r in rows} == {"valid": 5, "refusal": 1}


def test_each_reasons_share_has_its_wilson_interval_and_canaries_do_not_count():
    warehouse = Warehouse()
    reasons = [None] * 7 + ["refusal", "moderated", "moderated"]
    warehouse.insert("cleaned_samples", [sample(f"k{i}", valid=r is None, invalid_reason=r)
                                         for i, r in enumerate(reasons)])
    warehouse.insert("cleaned_samples", [sample("canary-1", category="canary", valid=False, invalid_reason="refusal")])
    rows = by(warehouse.build("fct_invalid_answers", [HERE]), "reason")
    assert {r: row["answers"] for r, row in rows.items()} == {"valid": 7, "refusal": 1, "moderated": 2}
    for row in rows.values():
        x = row["answers"]
        low, high = wilson(x, 10)
        assert (row["share"], row["share_low"], row["share_high"]) == (approx(x / 10), approx(low), approx(high))


# --- fct_visibility_alerts, visibility_alerts ----------------------------------------------------
# Each scenario on a platform of its own: alerts are tested per platform and day, so one range
# run builds them all.

def alerts(warehouse: Warehouse, platform: str | None = None) -> list[dict]:
    rows = warehouse.rows("visibility_alerts", exclude=["stored_at", "run_id"])
    return [r for r in rows if platform is None or r["platform"] == platform]


def days_of(warehouse: Warehouse, counts_by_day: dict, platform: str = "deepseek", brands: str = "ABC",
            total: int = 10) -> list[Partition]:
    """Answers of each day: {day: {brand: answers naming it}}; the partitions, in order."""
    for day, counts in counts_by_day.items():
        answers(warehouse, named(counts, total), day=day, platform=platform, brands=brands)
    return [Partition(day, platform) for day in sorted(counts_by_day)]


def jump_days(before: int = 2, today: int = 9, baseline_days: int = 4) -> dict:
    """Brand A: `before` of 10 answers on each baseline day, then `today` of 10."""
    return {DAY - timedelta(days=offset): {"A": today if offset == 0 else before}
            for offset in range(baseline_days, -1, -1)}


def at(seconds: float):
    return NOON + timedelta(seconds=seconds)


def _jump(warehouse, platform):
    """A: 2 of 10 answers on each of four days, then 9 of 10 (and three answers collected that day)."""
    warehouse.insert("raw_ai_responses", [response(f"{platform}-{i}", DAY, platform, received_at=at(i))
                                          for i in range(3)])
    return days_of(warehouse, jump_days(), platform)


BH_TODAY, BH_BEFORE = {"A": 9, "B": 7, "C": 8, "D": 5, "E": 7}, {"A": 2, "B": 3, "C": 5, "D": 5, "E": 3}


def _bh(warehouse, platform):
    days = {DAY - timedelta(days=o): (BH_TODAY if o == 0 else BH_BEFORE) for o in range(4, -1, -1)}
    return days_of(warehouse, days, platform, brands="ABCDE")


def _window(warehouse, platform):
    """A day eight days before (10 of 10) is out of the baseline; the seventh day before is in."""
    return days_of(warehouse, {DAY - timedelta(days=8): {"A": 10}, DAY - timedelta(days=7): {"A": 2},
                               DAY - timedelta(days=2): {"A": 2}, DAY - timedelta(days=1): {"A": 2}, DAY: {"A": 9}},
                   platform)


def _refusals(warehouse, platform, reason="refusal"):
    """20 answers a day: one refusal (or other invalid reason) on each of four days, then eight."""
    days = [DAY - timedelta(days=o) for o in range(4, -1, -1)]
    for day in days:
        refused = 8 if day == DAY else 1
        answers(warehouse, [(i >= refused, None if i >= refused else reason, False, {}) for i in range(20)],
                day=day, platform=platform, brands="A")
    return [Partition(d, platform) for d in days]


def _model_change(warehouse, platform):
    """The jump, on the day the platform answers with model m2 instead of m1."""
    days = days_of(warehouse, jump_days(), platform)
    warehouse.insert("raw_ai_responses", [response(f"{platform}-{d.date}-{i}", d.date, platform,
                                                   response_model="m2" if d.date == DAY else "m1")
                                          for d in days for i in range(10)])
    return days


ALERT_SCENARIOS = {
    "jump": _jump,
    "borderline": lambda w, p: days_of(w, jump_days(before=3, today=7), p),
    "drop": lambda w, p: days_of(w, jump_days(before=8, today=1), p),
    "baseline2": lambda w, p: days_of(w, jump_days(baseline_days=2), p),
    "baseline3": lambda w, p: days_of(w, jump_days(baseline_days=3), p),
    "window": _window,
    "bh": _bh,
    "refusals": _refusals,
    "moderations": lambda w, p: _refusals(w, p, "moderated"),
    "model_change": _model_change,
}


@pytest.fixture(scope="module")
def alerting() -> Warehouse:
    warehouse = Warehouse()
    run = [part for platform, write in ALERT_SCENARIOS.items() for part in write(warehouse, platform)]
    warehouse.build("visibility_alerts", run)
    warehouse.build("fct_collection_quality", run)
    return warehouse


@pytest.mark.slow  # over a second by design
def test_a_jump_against_the_trailing_week_is_one_alert_with_its_test(alerting):
    x1, n1, x0, n0 = 9, 10, 8, 40
    z, p = two_proportion(x1, n1, x0, n0)
    (alert,) = alerts(alerting, "jump")
    assert (alert["date"], alert["kind"], alert["subject"], alert["direction"]) == (DAY, "mention_rate", "A", "up")
    assert (alert["rate"], alert["baseline_rate"], alert["baseline_days"]) == (approx(0.9), approx(0.2), 4)
    assert alert["z"] == approx(z) and alert["p_value"] == approx(p, abs=2e-7)
    # Three tests that day (A, B, C; B and C have p = 1): Benjamini-Hochberg gives q = 3p for A.
    assert alert["tests_that_day"] == 3 and alert["q_value"] == approx(3 * p, abs=1e-6)


def test_an_alert_carries_both_rates_with_intervals_its_sizes_and_decision(alerting):
    (alert,) = alerts(alerting, "jump")
    assert (alert["rate_low"], alert["rate_high"]) == tuple(approx(v) for v in wilson(9, 10))
    assert (alert["baseline_low"], alert["baseline_high"]) == tuple(approx(v) for v in wilson(8, 40))
    assert alert["change"] == approx(0.7) and (alert["answers"], alert["baseline_answers"]) == (10, 40)
    assert (alert["category"], alert["decision"], alert["model_changed"]) == ("cat", "alert", False)
    assert alerting.rows("visibility_alerts") == alerting.rows("fct_visibility_alerts")


@pytest.mark.slow  # over a second by design
def test_alerts_built_as_one_range_run_equal_those_built_partition_by_partition(alerting):
    fresh = Warehouse()
    for partition in _jump(fresh, "jump"):  # each day's baseline built by the runs before
        fresh.build("visibility_alerts", [partition])
    assert alerts(fresh) == alerts(alerting, "jump") and len(alerts(fresh)) == 1


def test_q_values_are_benjamini_hochberg_over_every_test_of_the_platforms_day(alerting):
    tests = {b: two_proportion(BH_TODAY[b], 10, 4 * BH_BEFORE[b], 40) for b in BH_TODAY}
    q = dict(zip(tests, benjamini_hochberg([p for _, p in tests.values()])))
    expected = {b: (approx(tests[b][1], abs=2e-7), approx(q[b], abs=1e-6), "alert" if tests[b][1] < 0.01 and q[b] <= 0.1
                    else "borderline") for b in tests if tests[b][1] < 0.05}
    rows = alerts(alerting, "bh")
    assert {r["subject"]: (r["p_value"], r["q_value"], r["decision"]) for r in rows} == expected
    assert sorted(expected) == ["A", "B", "E"] and {r["tests_that_day"] for r in rows} == {5}
    assert q["B"] == approx(tests["B"][1] * 5 / 3)  # tied with E: the larger rank's bound holds for both


def test_a_change_with_p_between_001_and_005_is_borderline(alerting):
    (alert,) = alerts(alerting, "borderline")
    _, p = two_proportion(7, 10, 12, 40)
    assert 0.01 < p < 0.05 and 3 * p <= 0.10 and alert["p_value"] == approx(p, abs=2e-7)
    assert alert["decision"] == "borderline" and alert["q_value"] == approx(3 * p, abs=1e-6)


def test_a_drop_is_an_alert_going_down(alerting):
    (alert,) = alerts(alerting, "drop")
    z, _ = two_proportion(1, 10, 32, 40)
    assert (alert["direction"], alert["decision"]) == ("down", "alert")
    assert alert["change"] == approx(0.1 - 0.8) and z < 0 and alert["z"] == approx(z)


@pytest.mark.parametrize(("platform", "expected"), [("baseline2", []), ("baseline3", [3])])
def test_an_alert_needs_three_days_of_baseline(alerting, platform, expected):
    assert [a["baseline_days"] for a in alerts(alerting, platform)] == expected


def test_the_baseline_is_the_seven_days_before_and_no_more(alerting):
    (alert,) = [a for a in alerts(alerting, "window") if a["date"] == DAY]
    assert (alert["baseline_days"], alert["baseline_answers"], alert["baseline_rate"]) == (3, 30, approx(0.2))


def test_a_refusal_share_jump_is_an_alert_of_the_platform(alerting):
    (alert,) = alerts(alerting, "refusals")
    z, p = two_proportion(8, 20, 4, 80)
    assert (alert["kind"], alert["category"], alert["subject"], alert["direction"]) == (
        "refusal_share", None, "refusal", "up")
    assert (alert["rate"], alert["baseline_rate"], alert["answers"], alert["baseline_answers"]) == (
        approx(0.4), approx(0.05), 20, 80)
    assert alert["z"] == approx(z) and alert["tests_that_day"] == 2 and alert["q_value"] == approx(2 * p, abs=1e-6)


def test_each_alert_says_whose_it_is_a_brands_the_platforms_or_the_rules(alerting):
    classes = {(a["kind"], a["fault_class"]) for platform in ("jump", "refusals", "moderations", "model_change")
               for a in alerts(alerting, platform)}
    assert classes == {("mention_rate", "brand"), ("refusal_share", "source"), ("moderation_share", "source"),
                       ("model_change", "rule")}
    (spike,) = alerts(alerting, "moderations")  # a moderation spike is the platform's
    assert (spike["subject"], spike["direction"], spike["rate"]) == ("moderated", "up", approx(0.4))


def test_the_day_a_platform_changed_its_model_is_an_alert_and_labels_the_others(alerting):
    rows = by(alerts(alerting, "model_change"), "kind")
    assert sorted(rows) == ["mention_rate", "model_change"] and rows["mention_rate"]["model_changed"] is True
    change = rows["model_change"]
    assert (change["date"], change["subject"], change["direction"], change["decision"]) == (
        DAY, "model: m2", "up", "alert")
    assert (change["rate"], change["baseline_rate"], change["change"]) == (1.0, 0.0, 1.0)
    assert (change["answers"], change["baseline_answers"], change["baseline_days"]) == (10, 40, 4)
    assert (change["q_value"], change["tests_that_day"], change["category"]) == (None, None, None)


# --- fct_model_changes --------------------------------------------------------------------------

def collected(warehouse: Warehouse, day, count: int, category: str = "cat", texts=None, refused: int = 0,
              key: str = "r", platform: str = "deepseek", lists: int = 0, **values) -> None:
    """`count` answers of the day as collected and cleaned, the first `refused` refusals, the
    first `lists` with a list (the analyzer's option_list_kind); a callable value is called with
    the answer's index."""
    keys = [f"{key}-{platform}-{category}-{day}-{i}" for i in range(count)]
    warehouse.insert("raw_ai_responses", [
        response(k, day, platform, category=category, answer_text=(texts[i] if texts else "An answer."),
                 **{c: v(i) if callable(v) else v for c, v in values.items()}) for i, k in enumerate(keys)])
    warehouse.insert("cleaned_samples", [sample(k, day, platform, category=category, valid=i >= refused,
                                                invalid_reason="refusal" if i < refused else None,
                                                option_list_kind="bullet" if i < lists else None)
                                         for i, k in enumerate(keys)])


def changes(warehouse: Warehouse, parts) -> dict[tuple, dict]:
    return by(warehouse.build("fct_model_changes", parts), "date", "signal")


def week(warehouse: Warehouse, days: int = 7, **values) -> None:
    for offset in range(days, 0, -1):
        collected(warehouse, DAY - timedelta(days=offset), **values)


@pytest.fixture(scope="module")
def model_switch() -> dict[tuple, dict]:
    warehouse = Warehouse()
    week(warehouse, days=3, count=10, system_fingerprint="fp1")
    collected(warehouse, DAY, 10, response_model="m2", system_fingerprint="fp2")
    return changes(warehouse, [HERE])


@pytest.mark.parametrize(("signal", "value"), [("model", "m2"), ("fingerprint", "fp2")])
def test_a_model_or_fingerprint_no_answer_of_the_week_reported_is_flagged(model_switch, signal, value):
    row = model_switch[(DAY, signal)]
    z, p = two_proportion(10, 10, 0, 30)
    assert (row["value_today"], row["x1"], row["n1"], row["x0"], row["n0"]) == (value, 10, 10, 0, 30)
    assert (row["rate"], row["baseline_rate"], row["baseline_days"], row["flagged"]) == (1.0, 0.0, 3, True)
    assert (row["rate_low"], row["rate_high"]) == tuple(approx(v) for v in wilson(10, 10))
    assert (row["baseline_low"], row["baseline_high"]) == tuple(approx(v) for v in wilson(0, 30))
    assert row["z"] == approx(z) and row["p_value"] == approx(p, abs=2e-7)


def test_every_signal_has_a_row_each_day_even_without_canaries(model_switch):
    assert sorted(signal for _, signal in model_switch) == [
        "canary_length", "canary_lists", "canary_refusals", "fingerprint", "model"]
    row = model_switch[(DAY, "canary_lists")]
    assert (row["n1"], row["n0"], row["rate"], row["z"], row["flagged"]) == (0, 0, None, None, False)


SWITCHED = {4: False, 5: True}  # answers of 10 from a new model: flagged


@pytest.fixture(scope="module")
def switches() -> dict[tuple, dict]:
    warehouse = Warehouse()
    for switched in SWITCHED:
        week(warehouse, days=3, count=10, platform=f"p{switched}")
        collected(warehouse, DAY, 10, platform=f"p{switched}",
                  response_model=lambda i, n=switched: "m2" if i < n else "m1")
    return by(warehouse.build("fct_model_changes", [Partition(DAY, f"p{n}") for n in SWITCHED]), "platform", "signal")


@pytest.mark.parametrize("switched", sorted(SWITCHED))
def test_a_new_model_is_flagged_when_it_answers_at_least_half_of_the_day(switches, switched):
    row = switches[(f"p{switched}", "model")]
    assert (row["x1"], row["n1"], row["flagged"]) == (switched, 10, SWITCHED[switched])


def test_a_model_the_week_already_reported_is_not_new():
    warehouse = Warehouse()
    week(warehouse, days=3, count=10)
    collected(warehouse, DAY - timedelta(days=5), 1, response_model="m2", key="early")
    collected(warehouse, DAY, 10, response_model="m2")
    row = changes(warehouse, [HERE])[(DAY, "model")]
    assert (row["x1"], row["n0"], row["baseline_days"], row["flagged"]) == (0, 31, 4, False)


def test_answers_without_a_fingerprint_are_left_out_of_the_fingerprint_signal():
    warehouse = Warehouse()
    week(warehouse, days=3, count=10, system_fingerprint=lambda i: "fp1" if i % 2 else None)
    collected(warehouse, DAY, 10, system_fingerprint=lambda i: "fp2" if i < 6 else None)
    row = changes(warehouse, [HERE])[(DAY, "fingerprint")]
    assert (row["x1"], row["n1"], row["n0"], row["flagged"]) == (6, 6, 15, True)


PROSE, LIST = "x alpha beta", "- alpha beta"  # the same length: only list use differs (cleaned: a bullet list)


@pytest.fixture(scope="module")
def list_shift() -> dict[tuple, dict]:
    """Canary answers in prose for a week, then in lists for two days."""
    warehouse = Warehouse()
    week(warehouse, count=10, category="canary", texts=[PROSE] * 10)
    for day in (DAY, DAY + timedelta(days=1)):
        collected(warehouse, day, 10, category="canary", texts=[LIST] * 10, lists=10)
    return changes(warehouse, [HERE, Partition(DAY + timedelta(days=1), "deepseek")])


def test_a_shift_in_the_canaries_list_use_is_flagged_on_its_first_day(list_shift):
    row = list_shift[(DAY, "canary_lists")]
    z, p = two_proportion(10, 10, 0, 70)
    assert (row["x1"], row["n1"], row["x0"], row["n0"], row["baseline_days"]) == (10, 10, 0, 70, 7)
    assert row["z"] == approx(z) and row["p_value"] == approx(p, abs=2e-7) and row["flagged"] is True
    assert not list_shift[(DAY, "canary_length")]["flagged"] and not list_shift[(DAY, "model")]["flagged"]


def test_a_lasting_shift_is_flagged_once_not_on_the_days_after(list_shift):
    row = list_shift[(DAY + timedelta(days=1), "canary_lists")]
    _, p = two_proportion(10, 10, 10, 70)
    assert (row["x0"], row["n0"]) == (10, 70) and row["p_value"] == approx(p, abs=2e-7) and p < 0.001  # still shifted
    assert row["flagged"] is False  # but the day before was flagged already


@pytest.fixture(scope="module")
def list_kinds() -> dict[tuple, dict]:
    """On a platform for each kind of list the analyzer finds: one canary answer with it, one without."""
    warehouse = Warehouse()
    for i, kind in enumerate(LIST_KINDS):
        collected(warehouse, DAY, 2, category="canary", platform=f"p{i}", lists=1,
                  texts=[LIST, PROSE]) if kind else collected(warehouse, DAY, 2, category="canary", platform=f"p{i}")
    return by(warehouse.build("fct_model_changes", [Partition(DAY, f"p{i}") for i in range(len(LIST_KINDS))]),
              "platform", "signal")


LIST_KINDS = ("numbered", None)


@pytest.mark.parametrize(("index", "expected"), [(0, (1, 2)), (1, (0, 2))])
def test_a_canary_answer_uses_a_list_when_its_cleaned_sample_has_an_option_list_kind(list_kinds, index, expected):
    row = list_kinds[(f"p{index}", "canary_lists")]
    assert (row["x1"], row["n1"]) == expected


def _long_canaries(warehouse, platform):
    texts = ["a" * n for n in range(10, 20)]  # the week's median: 14.5
    week(warehouse, count=10, category="canary", texts=texts, platform=platform)
    collected(warehouse, DAY, 30, category="canary", texts=["b" * 30] * 30, platform=platform)


def _refused_canaries(warehouse, platform):
    week(warehouse, count=10, category="canary", refused=1, platform=platform)
    week(warehouse, count=5, refused=5, key="brand", platform=platform)  # refused brand questions: not canaries
    collected(warehouse, DAY, 10, category="canary", refused=8, platform=platform)


CANARY_SHIFTS = {  # signal: (the answers of a platform, x1, n1, x0, n0)
    "canary_length": (_long_canaries, 30, 30, 35, 70),
    "canary_refusals": (_refused_canaries, 8, 10, 7, 70),
}


@pytest.fixture(scope="module")
def canary_shifts() -> dict[tuple, dict]:
    warehouse = Warehouse()
    for signal, (write, *_) in CANARY_SHIFTS.items():
        write(warehouse, signal)
    return by(warehouse.build("fct_model_changes", [Partition(DAY, signal) for signal in CANARY_SHIFTS]),
              "platform", "signal")


@pytest.mark.parametrize("signal", sorted(CANARY_SHIFTS))
def test_a_shift_in_the_canaries_length_or_refusals_is_flagged(canary_shifts, signal):
    _, *counts = CANARY_SHIFTS[signal]
    row = canary_shifts[(signal, signal)]
    assert [row["x1"], row["n1"], row["x0"], row["n0"]] == counts
    assert row["p_value"] == approx(two_proportion(*counts)[1], abs=2e-7) and row["flagged"] is True
    others = [r["signal"] for (platform, _), r in canary_shifts.items() if platform == signal and r["flagged"]]
    assert others == [signal]


def test_a_canary_shift_needs_three_days_of_baseline():
    warehouse = Warehouse()
    week(warehouse, days=2, count=10, category="canary", texts=[PROSE] * 10)
    collected(warehouse, DAY, 10, category="canary", texts=[LIST] * 10, lists=10)
    row = changes(warehouse, [HERE])[(DAY, "canary_lists")]
    assert row["baseline_days"] == 2 and row["p_value"] < 0.001 and row["flagged"] is False


# --- collection_costs, fct_collection_quality ----------------------------------------------------

@pytest.fixture(scope="module")
def collection() -> Warehouse:
    """deepseek: four requests (two of tasks), seven HTTP attempts, three answers; qwen: answers
    and no request rows; kimi: requests and no answers; glm: a collection run and nothing else."""
    warehouse = Warehouse()
    warehouse.insert("cleaned_samples", [sample("r1"), sample("r2"), sample("r3", category="canary"),
                                         sample("r4", config_version="cfg2"), sample("q1", platform="qwen")])
    requests = [("r1", "succeeded", 1, "t1"), ("r2", "succeeded", 2, "t1"), ("r3", "succeeded", 3, "t2"),
                ("r4", "failed", 1, None)]
    warehouse.insert("collection_requests", [{"request_key": k, "date": DAY, "platform": "deepseek", "state": s,
                                              "attempts": n, "task_id": t} for k, s, n, t in requests]
                     + [{"request_key": "k1", "date": DAY, "platform": "kimi", "state": "failed", "attempts": 2}])
    attempts = [("r1", 1, 200, None, 30), ("r2", 1, 500, "server", 60), ("r2", 2, 200, None, 70),
                ("r3", 1, 429, "rate_limited", 100), ("r3", 2, 429, "rate_limited", 115),
                ("r3", 3, 200, "malformed", 130), ("r4", 1, None, "timeout", 10)]
    warehouse.insert("http_attempts", [{"request_key": k, "attempt": a, "date": DAY, "platform": "deepseek",
                                        "http_status": s, "error_class": e, "started_at": at(t)}
                                       for k, a, s, e, t in attempts])
    warehouse.insert("collection_tasks", [{"task_id": "t1", "date": DAY, "platform": "deepseek", "created_at": at(0)},
                                          {"task_id": "t2", "date": DAY, "platform": "deepseek", "created_at": at(40)}])
    warehouse.insert("raw_ai_responses", [
        response("r1", prompt_tokens=100, cached_tokens=10, completion_tokens=50, search_used=True, cost=0.5,
                 currency="CNY", received_at=at(35)),
        response("r2", prompt_tokens=200, completion_tokens=70, reasoning_tokens=20, search_count=3, search_used=True,
                 cost=1.0, currency="CNY", received_at=at(75)),
        response("r3", category="canary", outcome="moderated", prompt_tokens=30, received_at=at(140)),
        response("q1", platform="qwen", outcome="truncated", search_used=False, completion_tokens=5)])
    warehouse.insert("collection_runs", [{"run_id": "run1", "date": DAY, "platform": "deepseek", "skipped_done": 0},
                                         {"run_id": "run2", "date": DAY, "platform": "deepseek", "skipped_done": 3},
                                         {"run_id": "run3", "date": DAY, "platform": "glm", "skipped_done": 0}])
    warehouse.insert("analyzer_replays", [
        {"replay_id": i, "date": d, "platform": "deepseek", "replayed_at": at(s), "diff_share": v}
        for i, d, s, v in (("p1", DAY, 3600, 0.1), ("p2", DAY, 7200, 0.25), ("p3", DAY, 1800, 0.5),
                           ("p4", DAY - timedelta(days=1), 9000, 0.9))])
    run = [HERE, Partition(DAY, "qwen"), Partition(DAY, "kimi"), Partition(DAY, "glm")]
    warehouse.build("collection_costs", run)
    warehouse.build("fct_collection_quality", run)
    return warehouse


def test_collection_costs_add_up_tokens_searches_and_cost_per_partition(collection):
    row = by(collection.rows("collection_costs"), "platform")["deepseek"]
    assert (row["answers"], row["moderated"], row["truncated"]) == (3, 1, 0)
    tokens = ("prompt_tokens", "cached_tokens", "completion_tokens", "reasoning_tokens")
    assert tuple(row[c] for c in tokens) == (330, 10, 120, 20)
    # search_count when the platform reports it, else one search per answer that searched
    assert (row["searches"], row["answers_with_search"]) == (1 + 3, 2)
    assert (row["cost"], row["costed_answers"], row["currency"]) == (approx(1.5), 2, "CNY")


def test_collection_costs_count_requests_and_their_http_attempts(collection):
    costs = by(collection.rows("collection_costs"), "platform")
    assert (costs["deepseek"]["requests"], costs["deepseek"]["http_attempts"]) == (4, 7)
    # Without request rows (collected before they were kept), the answers are the requests.
    assert (costs["qwen"]["requests"], costs["qwen"]["http_attempts"], costs["qwen"]["truncated"]) == (1, None, 1)
    assert (costs["qwen"]["cost"], costs["qwen"]["costed_answers"], costs["qwen"]["searches"]) == (None, 0, 0)
    assert "kimi" not in costs and "glm" not in costs  # no answer: nothing was spent on answers


def test_int_partition_requests_has_a_row_per_partition_any_collection_table_holds(collection):
    rows = by(collection.rows("int_partition_requests"), "platform")
    columns = ("requests", "succeeded_requests", "http_attempts", "retries", "ok_bodies", "malformed_bodies",
               "answers", "moderated", "truncated", "collection_runs", "skipped_already_done", "tasks")
    assert {p: tuple(r[c] for c in columns) for p, r in rows.items()} == {
        "deepseek": (4, 3, 7, 3, 3, 1, 3, 1, 0, 2, 3, 2),
        "kimi": (1, 0, 2, 1) + (None,) * 8,
        "qwen": (None,) * 6 + (1, 0, 1) + (None,) * 3,
        "glm": (None,) * 9 + (1, 0, None)}
    assert rows["deepseek"]["last_received_at"] == at(140) and rows["qwen"]["task_wait_s_avg"] is None


@pytest.fixture(scope="module")
def quality(collection) -> dict[tuple, dict]:
    return by(collection.rows("fct_collection_quality"), "platform", "config_version")


def test_quality_has_a_row_per_config_and_analyzer_version_with_its_samples(quality):
    assert {k: q["samples"] for k, q in quality.items()} == {("deepseek", "cfg1"): 3, ("deepseek", "cfg2"): 1,
                                                             ("qwen", "cfg1"): 1}
    assert {q["analyzer_version"] for q in quality.values()} == {"1.0.0"}


def test_quality_shares_of_requests_succeeded_and_retried(quality):
    row = quality[("deepseek", "cfg1")]
    assert (row["requests"], row["success_share"], row["retries_per_request"]) == (4, approx(3 / 4), approx(3 / 4))
    assert quality[("deepseek", "cfg2")]["success_share"] == row["success_share"]  # a partition's, on each version


def test_quality_parse_success_is_over_http_200_bodies_and_moderation_over_answers(quality):
    row = quality[("deepseek", "cfg1")]
    assert row["parse_success"] == approx(1 - 1 / 3) and row["moderation_share"] == approx(1 / 3)


def test_quality_counts_runs_and_requests_found_done_over_every_run(quality):
    row = quality[("deepseek", "cfg1")]
    assert (row["collection_runs"], row["skipped_already_done"]) == (2, 3)


def test_quality_task_wait_is_from_planned_to_first_request_sent(quality):
    row = quality[("deepseek", "cfg1")]
    assert (row["tasks"], row["task_wait_s_avg"], row["task_wait_s_max"]) == (2, approx((30 + 60) / 2), approx(60))


def test_quality_takes_the_days_latest_replay(quality):
    assert quality[("deepseek", "cfg1")]["replay_diff_share"] == approx(0.25)


def test_quality_of_a_partition_with_nothing_but_answers_has_zero_counts_and_no_shares(quality):
    row = quality[("qwen", "cfg1")]
    assert (row["requests"], row["success_share"], row["retries_per_request"], row["parse_success"]) == (None,) * 4
    assert (row["skipped_already_done"], row["collection_runs"], row["tasks"], row["alerts"]) == (0, 0, 0, 0)
    assert (row["moderation_share"], row["replay_diff_share"], row["alert_latency_s"]) == (0.0, None, None)


def test_quality_counts_the_days_alerts_and_their_latency_from_the_last_answer(alerting):
    quality = by(alerting.rows("fct_collection_quality"), "platform", "date")
    (stored_at,) = [r["stored_at"] for r in alerting.rows("fct_visibility_alerts") if r["platform"] == "jump"]
    row = quality[("jump", DAY)]
    assert row["alerts"] == 1 and quality[("jump", DAY - timedelta(days=1))]["alerts"] == 0
    assert row["alert_latency_s"] == approx((stored_at - at(2)).total_seconds(), abs=1e-3)
    assert quality[("model_change", DAY)]["alerts"] == 2  # the mention rate's and the model change
    assert quality[("jump", DAY - timedelta(days=1))]["alert_latency_s"] is None


# --- cited_domains ------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def cited() -> dict[tuple, dict]:
    warehouse = Warehouse()
    answers(warehouse, [(True, None, True, {"A": (True, 1, True, True), "B": (True, 2, True, False)}),
                        (True, None, True, {"A": (True, None, True, False)}),
                        (True, None, True, {"C": (True, None, True, False)}),
                        (True, None, True, {}),
                        (False, "refusal", False, {})])
    k = [f"deepseek-{DAY}-cat-{i}" for i in range(4)]
    warehouse.insert("cleaned_samples", [sample("canary-1", category="canary")])
    citations = [(k[0], "https://zhuanlan.zhihu.com/p/1", "platform", "zhihu.com", "qa_community", None),
                 (k[0], "https://a.example/x", "text", "a.example", "own", "A"),
                 (k[1], "https://www.zhihu.com/q/2", "platform", "zhihu.com", "qa_community", None),
                 (k[1], "https://www.zhihu.com/q/3", "platform", "zhihu.com", "qa_community", None),
                 (k[2], "https://stackoverflow.com/a", "platform", "stackoverflow.com", "qa_community", None),
                 (k[2], "https://news.example/n", "text", "news.example", "news", None),
                 (k[3], "https://news.example/m", "text", "news.example", "news", None),
                 ("canary-1", "https://zhihu.com/c", "platform", "zhihu.com", "qa_community", None)]
    warehouse.insert("sample_citations", [{"request_key": key, "date": DAY, "platform": "deepseek", "url": url,
                                           "source": source, "domain": domain, "domain_class": cls, "own_brand": own}
                                          for key, url, source, domain, cls, own in citations])
    return by(warehouse.build("cited_domains", [HERE]), "domain", "source")


CITED = {  # (domain, source): (class, own brand, citing answers, class share, brands named beside it)
    ("zhihu.com", "platform"): ("qa_community", None, 2, 3 / 4, ["A", "B"]),
    ("stackoverflow.com", "platform"): ("qa_community", None, 1, 3 / 4, ["C"]),
    ("a.example", "text"): ("own", "A", 1, 1 / 4, ["A", "B"]),
    ("news.example", "text"): ("news", None, 2, 2 / 4, ["C"]),
}


@pytest.mark.parametrize("key", sorted(CITED))
def test_each_cited_domain_is_counted_once_per_answer_with_its_share_class_share_and_brands(cited, key):
    domain_class, own, citing, class_share, brands = CITED[key]
    row = cited[key]
    assert (row["domain_class"], row["own_brand"], row["citing_answers"], row["valid_answers"]) == (
        domain_class, own, citing, 4)
    low, high = wilson(citing, 4)
    assert (row["share"], row["share_low"], row["share_high"]) == (approx(citing / 4), approx(low), approx(high))
    assert row["class_share"] == approx(class_share) and row["brands_mentioned"] == brands


def test_canary_answers_citations_are_left_out_of_cited_domains(cited):
    assert sorted(cited) == sorted(CITED)  # the canary's zhihu.com citation adds no answer
    assert {(r["date"], r["platform"], r["run_id"]) for r in cited.values()} == {(DAY, "deepseek", RUN_ID)}


# --- the YAML tests on these rows ---------------------------------------------------------------

@pytest.mark.parametrize("scenario", ["metrics_warehouse", "alerting", "collection"])
def test_every_yaml_test_of_every_model_built_passes_on_well_formed_rows(request, scenario):
    warehouse = request.getfixturevalue(scenario)
    built = [Partition(*r) for r in warehouse.conn.execute(
        "SELECT DISTINCT date, platform FROM cleaned_samples ORDER BY ALL").fetchall()]
    checks = warehouse.failing_checks(built)
    assert {check: n for check, n in checks.items() if n} == {} and len(checks) >= 20


def test_a_valid_answer_with_an_invalid_reason_breaks_only_stg_samples_expression_test():
    broken = list(ANSWERS)
    broken[0] = (True, "refusal", True, ANSWERS[0][3])  # valid but with a reason
    warehouse = Warehouse()
    answers(warehouse, broken)
    warehouse.build_all([HERE])
    failing = {check: n for check, n in warehouse.failing_checks([HERE]).items() if n}
    assert failing == {("stg_samples", "expression_3"): 1}  # valid = (invalid_reason IS NULL)


OUTCOMES = ("moderated", "truncated")


@pytest.fixture(scope="module")
def cut_off() -> Warehouse:
    warehouse = Warehouse()
    for outcome in OUTCOMES:
        answers(warehouse, [(True, None, False, {}), (False, outcome, False, {})], platform=outcome)
    return warehouse.build_all([Partition(DAY, outcome) for outcome in OUTCOMES])


@pytest.mark.parametrize("outcome", OUTCOMES)
def test_an_answer_the_platform_cut_off_or_moderated_passes_the_staging_tests(cut_off, outcome):
    assert {check: n for check, n in cut_off.failing_checks([Partition(DAY, outcome)]).items() if n} == {}
    reasons = {r["reason"] for r in cut_off.rows("fct_invalid_answers") if r["platform"] == outcome}
    assert reasons == {"valid", outcome}


def test_the_harness_statistics_agree_with_the_textbook():
    assert wilson(0, 10)[0] == 0.0 and wilson(10, 10)[1] == approx(1.0)
    assert two_proportion(5, 10, 5, 10) == (0.0, 1.0) and two_proportion(9, 10, 1, 10)[1] < 0.001
    assert benjamini_hochberg([0.01, 0.04, 0.03]) == [approx(0.03), approx(0.04), approx(0.04)]
    assert [round(v, 4) for v in wilson(5, 10)] == [0.2366, 0.7634]
    assert math.isclose(two_proportion(9, 10, 8, 40)[0], 0.7 / math.sqrt(0.34 * 0.66 * 0.125))


# --- the project: layers, sources, documented columns, the output contract ---------------------

CONTRACT = {  # each table's columns and types, as the report, the events and users read them
    "cited_domains": (
        "date DATE, platform VARCHAR, domain VARCHAR, source VARCHAR, domain_class VARCHAR, "
        "own_brand VARCHAR, citing_answers BIGINT, valid_answers BIGINT, share DOUBLE, share_low DOUBLE, "
        "share_high DOUBLE, class_share DOUBLE, brands_mentioned VARCHAR[], run_id VARCHAR"),
    "collection_costs": (
        "date DATE, platform VARCHAR, requests BIGINT, http_attempts HUGEINT, answers BIGINT, "
        "moderated BIGINT, truncated BIGINT, prompt_tokens HUGEINT, cached_tokens HUGEINT, "
        "completion_tokens HUGEINT, reasoning_tokens HUGEINT, searches HUGEINT, answers_with_search BIGINT, "
        "cost DOUBLE, costed_answers BIGINT, currency VARCHAR, run_id VARCHAR"),
    "int_brand_daily": (
        "date DATE, platform VARCHAR, category VARCHAR, brand VARCHAR, answers BIGINT, valid_answers BIGINT, "
        "mentioned_answers BIGINT, named_unknown_answers BIGINT, known_mentioned_answers BIGINT, "
        "listed_answers BIGINT, avg_list_rank DOUBLE, list_rank_sum_sq BIGINT, top1_answers BIGINT, "
        "top3_answers BIGINT, recommended_answers BIGINT, negative_answers BIGINT, "
        "positive_sentiment_answers BIGINT, negative_sentiment_answers BIGINT, judge_labelled_answers BIGINT, "
        "review_labelled_answers BIGINT, reviewed_answers BIGINT, "
        "cited_answers BIGINT, own_domain_cited_answers BIGINT, weight_sum DOUBLE, weighted_mentions DOUBLE, "
        "weight_sq_sum DOUBLE"),
    "fct_mention_metrics": (
        "date DATE, platform VARCHAR, category VARCHAR, brand VARCHAR, answers BIGINT, valid_answers BIGINT, "
        "mentioned_answers BIGINT, named_unknown_answers BIGINT, known_mentioned_answers BIGINT, "
        "mention_rate DOUBLE, mention_rate_low DOUBLE, mention_rate_high DOUBLE, "
        "share_of_voice DOUBLE, weighted_mention_rate DOUBLE, weighted_mention_rate_low DOUBLE, "
        "weighted_mention_rate_high DOUBLE, weighted_share_of_voice DOUBLE, effective_answers DOUBLE, "
        "avg_list_rank DOUBLE, top1_rate DOUBLE, top3_rate DOUBLE, "
        "recommend_rate DOUBLE, negative_rate DOUBLE, positive_rate DOUBLE, positive_rate_low DOUBLE, "
        "positive_rate_high DOUBLE, negative_sentiment_rate DOUBLE, negative_sentiment_rate_low DOUBLE, "
        "negative_sentiment_rate_high DOUBLE, sentiment_source VARCHAR, citation_rate DOUBLE, "
        "own_domain_citation_rate DOUBLE, "
        "category_mentions BIGINT, listed_answers BIGINT, top1_answers BIGINT, top3_answers BIGINT, "
        "recommended_answers BIGINT, negative_answers BIGINT, positive_sentiment_answers BIGINT, "
        "negative_sentiment_answers BIGINT, judge_labelled_answers BIGINT, review_labelled_answers BIGINT, "
        "reviewed_answers BIGINT, cited_answers BIGINT, own_domain_cited_answers BIGINT, "
        "list_rank_sum_sq BIGINT, weight_sum DOUBLE, weighted_mentions DOUBLE, weight_sq_sum DOUBLE, "
        "config_version VARCHAR, analyzer_version VARCHAR, samples_run_id VARCHAR, "
        "run_id VARCHAR"),
    "fct_invalid_answers": (
        "date DATE, platform VARCHAR, reason VARCHAR, answers BIGINT, share DOUBLE, share_low DOUBLE, "
        "share_high DOUBLE, run_id VARCHAR"),
    "fct_model_changes": (
        "date DATE, platform VARCHAR, signal VARCHAR, value_today VARCHAR, x1 BIGINT, n1 BIGINT, x0 BIGINT, "
        "n0 BIGINT, rate DOUBLE, rate_low DOUBLE, rate_high DOUBLE, baseline_rate DOUBLE, "
        "baseline_low DOUBLE, baseline_high DOUBLE, z DOUBLE, p_value DOUBLE, baseline_days BIGINT, "
        "flagged BOOLEAN, run_id VARCHAR"),
    "fct_visibility_alerts": (
        "date DATE, platform VARCHAR, kind VARCHAR, category VARCHAR, subject VARCHAR, direction VARCHAR, "
        "rate DOUBLE, rate_low DOUBLE, rate_high DOUBLE, baseline_rate DOUBLE, baseline_low DOUBLE, "
        "baseline_high DOUBLE, change DOUBLE, z DOUBLE, p_value DOUBLE, q_value DOUBLE, "
        "tests_that_day BIGINT, decision VARCHAR, answers HUGEINT, baseline_answers HUGEINT, "
        "baseline_days BIGINT, stored_at TIMESTAMP WITH TIME ZONE, run_id VARCHAR, model_changed BOOLEAN, "
        "fault_class VARCHAR"),
    "fct_collection_quality": (
        "date DATE, platform VARCHAR, config_version VARCHAR, analyzer_version VARCHAR, samples BIGINT, "
        "requests BIGINT, success_share DOUBLE, retries_per_request DOUBLE, parse_success DOUBLE, "
        "moderation_share DOUBLE, skipped_already_done HUGEINT, collection_runs BIGINT, tasks BIGINT, "
        "task_wait_s_avg DOUBLE, task_wait_s_max DOUBLE, replay_diff_share DOUBLE, alerts BIGINT, "
        "alert_latency_s DOUBLE, run_id VARCHAR"),
}
VIEWS_OF = {"mention_metrics": "fct_mention_metrics", "visibility_alerts": "fct_visibility_alerts"}


@pytest.fixture(scope="module")
def every_model() -> Warehouse:
    """Every model built over one partition (the tables' columns do not depend on the rows)."""
    warehouse = Warehouse()
    answers(warehouse, ANSWERS)
    return warehouse.build_all([HERE])


@pytest.mark.parametrize("name", sorted(CONTRACT) + sorted(VIEWS_OF))
def test_each_output_table_keeps_its_columns_and_types(every_model, name):
    described = ", ".join(f"{column} {type_}" for column, type_ in every_model.describe(name))
    assert described == CONTRACT[VIEWS_OF.get(name, name)]


@pytest.mark.parametrize("name", sorted(shipped_project().models))
def test_every_model_documents_every_output_column_in_its_yaml(every_model, name):
    model = shipped_project().models[name]
    assert list(model.columns) == [column for column, _ in every_model.describe(name)]
    assert all(description.strip() for description in model.columns.values())


def test_a_staging_model_reads_a_source_and_depends_on_the_asset_writing_it(tmp_path):
    root = copy_project(tmp_path)
    (root / "staging" / "stg_matches.sql").write_text(
        "-- kind: view\n-- grain: request_key\nSELECT request_key FROM {{ ref('entity_matches') }}\n")
    project = load_project(root)
    model = project.models["stg_matches"]
    assert (model.layer, model.sources, model.columns) == ("staging", ("entity_matches",), {})
    assert project.upstream_assets(model) == ["cleaned_samples"]


def test_the_sources_are_declared_once_with_the_asset_writing_each():
    sources = shipped_project().sources
    assert set(sources) <= set(TABLES) and {s.asset for s in sources.values()} == {
        "raw_ai_responses", "cleaned_samples", "judge_verdicts", "brand_catalog", None}
    assert sources["analyzer_replays"].asset is None and sources["collection_tasks"].asset == "raw_ai_responses"
    assert sources["fault_events"].asset is None  # the run failure sensor and the commands write it
    read = {ref for model in shipped_project().models.values() for ref in model.sources}
    assert read == {"raw_ai_responses", "collection_requests", "http_attempts", "collection_runs", "collection_tasks",
                    "analyzer_replays", "cleaned_samples", "sample_brand_results", "sample_citations",
                    "judge_verdicts", "entity_matches", "sample_untracked_names", "fault_events", "label_reviews"}
    assert all(source.description for source in sources.values())


SOURCES_YML = (PROJECT_DIR / "staging" / "sources.yml").read_text(encoding="utf-8")
BROKEN = {  # a project with these files written: the error, after the file's name
    "a mart reading a source": ({"marts/fct_raw.sql": "-- kind: view\n-- grain: request_key\n"
                                 "SELECT * FROM {{ ref('raw_ai_responses') }}\n"},
                                r"fct_raw.sql: ref\('raw_ai_responses'\) reads a source table; only staging"),
    "a source no table": ({"staging/sources.yml": SOURCES_YML + "  - {name: raw_answers, asset: raw_ai_responses}\n"},
                          r"sources.yml: sources\[18\]: 'raw_answers' is not a table of"),
    "a source without asset": ({"staging/sources.yml": "sources:\n  - {name: cleaned_samples}\n"},
                               r"sources.yml: sources\[0\]: expected 'name', 'asset'"),
    "a source twice": ({"staging/sources.yml": SOURCES_YML + "  - {name: http_attempts, asset: null}\n"},
                       r"sources.yml: sources\[18\]: source 'http_attempts' is listed twice"),
    "an empty description": ({"marts/mention_metrics.yml": "columns: {answers: ''}\n"},
                             "mention_metrics.yml: 'columns' must map each output column to a one-line description"),
    "a list of columns": ({"marts/mention_metrics.yml": "columns: [answers]\n"},
                          "mention_metrics.yml: 'columns' must map each output column to a one-line description"),
    "columns of no model": ({"marts/mention_metrics.yml": "columns: nope\n"},
                            "mention_metrics.yml: columns: 'nope' is not a model documenting its own columns"),
}


@pytest.mark.parametrize("case", sorted(BROKEN))
def test_a_project_breaking_the_layers_sources_or_column_docs_is_an_error_naming_the_file(tmp_path, case):
    files, message = BROKEN[case]
    root = copy_project(tmp_path)
    for relative, text in files.items():
        (root / relative).write_text(text, encoding="utf-8")
    with pytest.raises(ModelError, match=message):
        load_project(root)


def test_ensure_sources_creates_the_tables_listed_and_adds_columns_a_newer_schema_has():
    conn = duckdb.connect()
    tasks = TABLES["collection_tasks"]
    conn.execute(Table(tasks.name, tasks.fields[:-1]).ddl())  # before the optional run_id
    ensure_sources(conn, ["analyzer_replays", "collection_tasks"])
    ensure_sources(conn, ["analyzer_replays", "collection_tasks"])  # once there, left as they are
    for name in ("analyzer_replays", "collection_tasks"):
        assert [row[0] for row in conn.execute("DESCRIBE " + name).fetchall()] == TABLES[name].columns
    assert existing_tables(conn) == {"analyzer_replays", "collection_tasks"}


def test_the_wilson_macro_gives_the_share_and_its_interval_as_one_struct():
    conn = duckdb.connect()
    create_macros(conn, shipped_project())
    value, low, high, empty = conn.execute(
        "SELECT wilson(3, 10), wilson_low(3, 10), wilson_high(3, 10), wilson(0, 0)").fetchone()
    assert value == {"rate": 0.3, "low": approx(wilson(3, 10)[0]), "high": approx(wilson(3, 10)[1])}
    assert (low, high) == (value["low"], value["high"]) and empty is None


@pytest.mark.parametrize(("x1", "n1", "x0", "n0"), [(9, 10, 8, 40), (1, 10, 32, 40), (30, 30, 35, 70), (3, 7, 3, 7)])
def test_the_two_proportion_macros_agree_with_the_normal_distribution(x1, n1, x0, n0):
    conn = duckdb.connect()
    create_macros(conn, shipped_project())
    z, p = conn.execute("SELECT z, normal_two_sided_p(z) FROM (SELECT two_proportion_z($x1, $n1, $x0, $n0) AS z)",
                        {"x1": x1, "n1": n1, "x0": x0, "n0": n0}).fetchone()
    assert (z, p) == (approx(two_proportion(x1, n1, x0, n0)[0]), approx(two_proportion(x1, n1, x0, n0)[1], abs=2e-7))


# --- ephemeral models -----------------------------------------------------------------------

def test_an_ephemeral_model_is_no_asset_and_the_models_reading_it_hold_it_as_a_cte():
    from visibility_assets.config import EXAMPLE_CONFIG_DIR, load_config
    from visibility_assets.core.partitions import daily_platform_partitions
    from visibility_assets.measure.defs import build_sql_assets

    project = load_project()
    ephemeral = {name for name, model in project.models.items() if model.kind == "ephemeral"}
    assert {"stg_responses", "stg_requests", "stg_citations"} <= ephemeral
    assets = {k.to_user_string() for a in build_sql_assets(
        daily_platform_partitions(load_config(EXAMPLE_CONFIG_DIR).platform_names), project) for k in a.keys}
    assert not assets & ephemeral and "cited_domains" in assets
    cited = project.models["cited_domains"]
    assert cited.compiled().startswith("WITH stg_citations AS (")  # its own WITH merged after it
    assert "stg_citations" not in project.upstream_assets(cited)  # no asset to depend on ...
    assert "cleaned_samples" in project.upstream_assets(cited)  # ... but the one writing its source
    assert "sample_citations" in cited.sources  # created empty when never written, as a staging view's


def test_an_ephemeral_model_cannot_carry_tests(tmp_path):
    root = copy_project(tmp_path)
    (root / "staging" / "stg_requests.yml").write_text("tests:\n  - not_null: [request_key]\n")
    with pytest.raises(ModelError, match=r"stg_requests.sql: an ephemeral model has no table to test"):
        load_project(root)


# --- the runner: several models in one step, views kept current ------------------------------

class OneConnection:
    """The runner's Warehouse on one in-memory DuckDB: each write is a transaction on it."""

    def __init__(self):
        self.conn = duckdb.connect(config={"threads": 1})
        self.writes = 0

    def write(self, work):
        self.writes += 1
        self.conn.execute("BEGIN")
        result = work(self.conn)
        self.conn.execute("COMMIT")
        return result, None

    def read(self, work):
        self.conn.execute("BEGIN")
        result = work(self.conn)
        self.conn.execute("COMMIT")
        return result


def test_many_models_build_in_two_transactions_and_a_changed_view_is_replaced_where_it_is_read(tmp_path):
    from visibility_assets.measure.runner import materialize_models, view_definitions

    lake = OneConnection()
    for table, rows in {"cleaned_samples": [sample("k1"), sample("k2")],
                        "sample_brand_results": [brand_result("k1", "阿里云", mentioned=True, mention_count=2)]}.items():
        ensure_table(lake.conn, TABLES[table])
        insert_batch(lake.conn, TABLES[table], TABLES[table].from_dicts([source_row(table, **r) for r in rows]))
    project = shipped_project()
    models = [project.models[name] for name in ("int_brand_daily", "fct_mention_metrics")]
    built = materialize_models(lake, project, models, [Partition(DAY, "deepseek")], RUN_ID)
    assert lake.writes == 2 and set(built) == {"int_brand_daily", "fct_mention_metrics"}
    assert built["fct_mention_metrics"].rows > 0 and not any(built["fct_mention_metrics"].failing.values())
    first = view_definitions(lake.conn)
    assert first["stg_brand_results"].startswith("definition ")  # made where missing, with its digest

    root = copy_project(tmp_path)
    view = root / "staging" / "stg_brand_results.sql"
    view.write_text(view.read_text().replace("SELECT", "SELECT 1 AS added_column,", 1))
    changed = load_project(root)
    materialize_models(lake, changed, [changed.models["int_brand_daily"]], [Partition(DAY, "deepseek")], RUN_ID)
    assert view_definitions(lake.conn)["stg_brand_results"] != first["stg_brand_results"]
    assert "added_column" in {c[0] for c in lake.conn.execute("DESCRIBE stg_brand_results").fetchall()}
    assert view_definitions(lake.conn)["stg_samples"] == first.get("stg_samples")  # unchanged: left alone


def test_a_view_is_tested_over_all_its_rows_when_made_then_over_its_last_days_after_each_night():
    """A view's tests (stg_samples': valid exactly when there is no invalid_reason) read all its
    rows when the view is made, then only the days before its latest that a night can change."""
    from datetime import timedelta

    from visibility_assets.measure.model_tests import RECENT_DAYS
    from visibility_assets.measure.runner import materialize_models

    lake = OneConnection()
    table = TABLES["cleaned_samples"]
    ensure_table(lake.conn, table)

    def add(*rows):
        insert_batch(lake.conn, table, table.from_dicts([source_row("cleaned_samples", **r) for r in rows]))

    add(sample("old", day=DAY - timedelta(days=30), valid=False), sample("new", day=DAY))  # "old" breaks the rule
    project = shipped_project()
    view = [project.models["stg_samples"]]
    made = materialize_models(lake, project, view, [], RUN_ID)["stg_samples"].failing
    assert made["expression_3"] == 1  # made now: every row tested
    again = materialize_models(lake, project, view, [], RUN_ID)["stg_samples"].failing
    assert again["expression_3"] == 0  # 30 days back: tested when it was new
    add(sample("last", day=DAY - timedelta(days=RECENT_DAYS), valid=False))
    assert materialize_models(lake, project, view, [], RUN_ID)["stg_samples"].failing[
        "expression_3"] == 1
