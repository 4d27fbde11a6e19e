"""A brand named only to say nothing is known or found of it: mentioned, never recommended, no
sentiment; the answer around it is still an answer (tests/eval e249-e292 hold the labelled set)."""

import pytest

from visibility_assets.clean.analyzer import Analyzer
from visibility_assets.config import load_catalog
from tests.clean.test_analyzer_eval import EVAL


@pytest.fixture(scope="module")
def analyzer() -> Analyzer:
    return Analyzer(load_catalog(EVAL / "brands.yaml"))


def _brands(analyzer, answer: str, category: str, question: str = "推荐哪家？") -> dict[str, dict]:
    result = analyzer.analyze(answer, question, category).as_json("x")
    assert result["valid"], result["invalid_reason"]
    return {name: brand for name, brand in result["brands"].items() if brand["mentioned"]}


@pytest.mark.parametrize("answer, category, unknown", [
    ("我没有找到关于悟空CRM的可靠信息。如果你需要CRM，可以考虑Salesforce和纷享销客，它们都比较成熟。", "crm", "悟空CRM"),
    ("關於一加，我查不到可靠的資料。建議考慮蘋果或三星，售後網點比較多。", "phone", "一加"),
    ("I couldn't find any reliable information on Volcano Engine. For most teams AWS is a safe choice.", "cloud", "火山引擎"),
    ("As for Google Cloud, I'm not aware of its current offer here. AWS remains the default choice.", "cloud", "Google Cloud"),
    ("关于销售易：\n抱歉，我目前没有销售易的相关资料。Salesforce 功能最全，适合大型团队。", "crm", "销售易"),
])
def test_a_brand_named_only_to_say_nothing_is_known_is_mentioned_but_neither_recommended_nor_toned(
        analyzer, answer, category, unknown):
    brands = _brands(analyzer, answer, category)
    assert brands[unknown]["named_unknown"] is True
    assert (brands[unknown]["recommended"], brands[unknown]["sentiment"]) == (None, None)
    assert brands[unknown]["mention_count"] >= 1  # counted in the mentions
    others = [name for name in brands if name != unknown]
    assert others and all(brands[name]["named_unknown"] is False and brands[name]["recommended"] for name in others)


@pytest.mark.parametrize("answer, category", [
    ("我没有销售易最新的价格信息，但销售易的产品线覆盖营销、销售和服务，适合中大型企业。", "crm"),
    ("I don't have current pricing for AWS, though it is known for the broadest service catalog.", "cloud"),
    ("我没有找到关于这家小厂商的信息，而阿里云则是国内市场份额第一的厂商，推荐优先考虑。", "cloud"),
])
def test_missing_one_detail_or_knowing_nothing_of_another_is_not_named_but_unknown(analyzer, answer, category):
    assert not any(brand["named_unknown"] for brand in _brands(analyzer, answer, category).values())


def test_nothing_found_of_one_brand_leaves_the_brand_beside_it_as_it_was(analyzer):
    brands = _brands(analyzer, "我没有找到关于火山引擎的信息，而阿里云则是国内市场份额第一的厂商，推荐优先考虑。", "cloud")
    assert brands["火山引擎"]["named_unknown"] and not brands["阿里云"]["named_unknown"]
    assert brands["阿里云"]["recommended"] is True


def test_found_nothing_then_advice_of_its_own_is_an_answer_not_a_refusal(analyzer):
    answer = ("I couldn't find reliable information on Volcano Engine, so I can't tell you how it compares. When you"
              " evaluate a provider you don't know well, check:\n\n- a region close to your users and a published SLA;\n"
              "- managed databases and load balancers;\n- egress prices.")
    brands = _brands(analyzer, answer, "cloud", "Is Volcano Engine a good alternative to AWS?")
    assert brands["火山引擎"]["named_unknown"] is True


def test_a_short_apology_that_offers_nothing_is_still_a_refusal(analyzer):
    result = analyzer.analyze("抱歉，我无法回答关于阿里云的问题。", "阿里云怎么样？", "cloud")
    assert (result.valid, result.invalid_reason) == (False, "refusal")
