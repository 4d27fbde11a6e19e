"""Questions asked the way different people ask them (questions.yaml `variants`): each variant is
collected as its own requests under its own keys, labelled through cleaning, and measured per
variant (fct_variant_metrics) and pooled (fct_mention_metrics)."""

from __future__ import annotations

import pytest
import yaml
from dagster import DagsterInstance

from tests.conftest import write_config
from visibility_assets.collect.plan import plan_requests
from visibility_assets.config import ConfigError, load_config

DAY, PLATFORM = "2026-11-30", "qwen"
VARIANTS = [{"name": "cfo", "text": "作为一家中型企业的财务负责人，有哪些云数据库方案值得考虑？"},
            {"name": "us-startup", "text": "Which cloud database services suit a US startup?",
             "location": {"country": "US", "region": "California", "city": "San Francisco"}}]


def with_variants(directory, variants=VARIANTS, question: int = 0):
    path = directory / "questions.yaml"
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    data["questions"][question]["variants"] = variants
    path.write_text(yaml.safe_dump(data, allow_unicode=True), encoding="utf-8")
    return directory


def test_each_variant_is_planned_as_its_own_requests_and_the_base_keeps_its_keys(tmp_path):
    plain = load_config(write_config(tmp_path / "plain", 8787, questions=3, rounds=2))
    varied = load_config(with_variants(write_config(tmp_path / "varied", 8787, questions=3, rounds=2)))
    platform = varied.platform(PLATFORM)
    before = {r.request_key for r in plan_requests(plain, plain.platform(PLATFORM), DAY)}
    planned = plan_requests(varied, platform, DAY)
    by_variant = {}
    for request in planned:
        by_variant.setdefault(request.variant, []).append(request)
    assert {v: len(rs) for v, rs in by_variant.items() if v} == {"cfo": 2, "us-startup": 2}  # one per round
    assert len({r.request_key for r in planned}) == len(planned)
    assert {r.request_key for r in by_variant[None]} == before  # variants take nothing from the base
    cfo = by_variant["cfo"][0]
    assert (cfo.question_id, cfo.question_text) == ("q001", VARIANTS[0]["text"])
    assert cfo.body["messages"][0]["content"] == VARIANTS[0]["text"]


def test_two_variants_with_the_same_text_are_still_two_requests(tmp_path):
    same = [{"name": "a", "text": "有哪些云数据库？"}, {"name": "b", "text": "有哪些云数据库？"}]
    config = load_config(with_variants(write_config(tmp_path / "c", 8787, questions=1, rounds=1), same))
    keys = {r.variant: r.request_key for r in plan_requests(config, config.platform(PLATFORM), DAY)}
    assert len(set(keys.values())) == 3


def test_a_variant_location_goes_into_the_search_parameter_of_platforms_that_document_one(tmp_path):
    directory = with_variants(write_config(tmp_path / "c", 8787, questions=1, rounds=1, web_search=True))
    config = load_config(directory)
    located = {p.name: next(r for r in plan_requests(config, p, DAY) if r.variant == "us-startup")
               for p in config.platforms}
    assert "user_location" not in str(located["qwen"].body)  # DashScope's search takes no location
    openai_platform = config.platforms[0].model_copy(update={"name": "chatgpt", "dialect": "openai"})
    (request,) = [r for r in plan_requests(config, openai_platform, DAY) if r.variant == "us-startup"]
    assert request.body["web_search_options"]["user_location"] == {
        "type": "approximate", "approximate": {"country": "US", "region": "California", "city": "San Francisco"}}
    sonar = config.platforms[0].model_copy(update={"name": "sonar", "dialect": "perplexity"})
    (request,) = [r for r in plan_requests(config, sonar, DAY) if r.variant == "us-startup"]
    assert request.body["web_search_options"]["user_location"] == {"country": "US"}


@pytest.mark.parametrize(("variants", "message"), [
    ([{"name": "base", "text": "x"}], "is the question's own text"),
    ([{"name": "cfo", "text": "x"}, {"name": "cfo", "text": "y"}], "variant 'cfo' is named twice"),
    ([{"name": "cfo", "text": "x", "location": {"country": "usa"}}], "country"),
])
def test_a_bad_variant_is_a_config_error_naming_the_line(tmp_path, variants, message):
    directory = with_variants(write_config(tmp_path / "c", 8787, questions=2), variants)
    with pytest.raises(ConfigError, match=message) as raised:
        load_config(directory)
    assert "questions.yaml line" in str(raised.value)


@pytest.mark.dagster
def test_a_question_with_two_variants_is_collected_cleaned_and_measured_per_variant_and_pooled(
        tmp_path, visibility_home, simulator, monkeypatch):
    directory = with_variants(write_config(tmp_path / "config", simulator.port, questions=3, rounds=2))
    monkeypatch.setenv("VISIBILITY_CONFIG_DIR", str(directory))
    from tests.pipeline import materialize_for, read_warehouse
    result = materialize_for(["fct_variant_metrics", "fct_mention_metrics"], DAY, PLATFORM,
                             instance=DagsterInstance.ephemeral())
    assert result.success
    with read_warehouse() as conn:
        raw = conn.execute("SELECT coalesce(variant, 'base'), count(*), count(DISTINCT request_key),"
                           " list(DISTINCT question_text) FROM raw_ai_responses WHERE question_id = 'q001'"
                           " GROUP BY 1 ORDER BY 1").fetchall()
        cleaned = dict(conn.execute("SELECT coalesce(variant, 'base'), count(*) FROM cleaned_samples"
                                    " GROUP BY 1").fetchall())
        per_variant = conn.execute("""SELECT variant, sum(valid_answers), sum(mentioned_answers)
                                      FROM fct_variant_metrics WHERE brand = '阿里云' GROUP BY 1""").fetchall()
        pooled = conn.execute("SELECT valid_answers, mentioned_answers FROM fct_mention_metrics"
                              " WHERE brand = '阿里云'").fetchone()
    assert raw == [("base", 2, 2, [load_config(directory).questions[0].text]), ("cfo", 2, 2, [VARIANTS[0]["text"]]),
                   ("us-startup", 2, 2, [VARIANTS[1]["text"]])]
    assert cleaned == {"base": 6, "cfo": 2, "us-startup": 2}  # 3 questions x 2 rounds, and 2 per variant
    assert {v for v, *_ in per_variant} == {"base", "cfo", "us-startup"}
    assert (sum(n for _, n, _ in per_variant), sum(m for *_, m in per_variant)) == pooled
    assert len(simulator.app.stats[PLATFORM].received_by_key) == 10  # every request its own key
