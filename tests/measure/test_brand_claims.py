"""brand_claims: what each AI says about a brand, per platform and week, the judge's quoted claims
and the lexicon's cues, each with the share of the answers naming the brand, and what is new."""

from datetime import date, timedelta

from tests.sql_models_harness import Warehouse, brand_result, sample
from visibility_assets.core.partitions import Partition

MONDAY = date(2026, 11, 9)
NEXT_MONDAY = MONDAY + timedelta(days=7)


def verdict(key: str, day: date, brand: str, claims: list[str]) -> dict:
    return {"request_key": key, "date": day, "platform": "deepseek", "brand": brand, "sentiment": "positive",
            "role": "option", "claims": claims, "judge_platform": "qwen", "judge_model": "qwen-plus",
            "prompt_version": "v1"}


def cue(key: str, day: date, brand: str, cues: list[str], start: int = 0) -> dict:
    return {"request_key": key, "date": day, "platform": "deepseek", "brand": brand, "accepted": True,
            "start_pos": start, "sentiment_cues": cues}


def test_each_claim_and_cue_has_the_share_of_answers_naming_the_brand_and_new_ones_are_marked():
    warehouse = Warehouse()
    days = {MONDAY: ["a1", "a2", "a3", "a4"], NEXT_MONDAY: ["b1", "b2"]}
    for day, keys in days.items():
        warehouse.insert("cleaned_samples", [sample(k, day) for k in keys])
        warehouse.insert("sample_brand_results", [brand_result(k, "阿里云", day, mentioned=True) for k in keys])
    warehouse.insert("judge_verdicts", [
        verdict("a1", MONDAY, "阿里云", ["文档完善", "价格偏高"]), verdict("a2", MONDAY, "阿里云", ["文档完善"]),
        verdict("b1", NEXT_MONDAY, "阿里云", ["文档完善"]), verdict("b2", NEXT_MONDAY, "阿里云", ["出海首选"])])
    warehouse.insert("entity_matches", [
        cue("a1", MONDAY, "阿里云", ["+稳定"]), cue("a1", MONDAY, "阿里云", ["+稳定"], start=30),  # one answer, twice
        cue("a3", MONDAY, "阿里云", ["-贵"]), cue("b1", NEXT_MONDAY, "阿里云", ["-贵"])])
    partitions = [Partition(day, "deepseek") for day in days]
    warehouse.build("int_brand_daily", partitions)
    rows = {(r["week"], r["kind"], r["phrase"]): r for r in warehouse.build("brand_claims", partitions)}
    first, second = rows[(MONDAY, "claim", "文档完善")], rows[(NEXT_MONDAY, "claim", "文档完善")]
    assert (first["answers"], first["mentioned_answers"], first["share"], first["place"]) == (2, 4, 0.5, 1)
    assert (second["share"], second["new_this_week"], first["new_this_week"]) == (0.5, False, True)
    assert rows[(NEXT_MONDAY, "claim", "出海首选")]["new_this_week"] is True
    assert rows[(MONDAY, "cue", "+稳定")]["answers"] == 1  # an answer counts once, however many mentions
    assert rows[(NEXT_MONDAY, "cue", "-贵")]["new_this_week"] is False
    assert (NEXT_MONDAY, "claim", "价格偏高") not in rows
    assert not any(warehouse.failing_checks(partitions).values())
