"""The lexicon's sentiment (clean/sentiment.py) through the analyzer, one rule per test. The
lexicon's labels and cues are what the learned model reads (clean/sentiment_model.py), so the
rules are tested with the model off; tests/clean/test_sentiment_model.py tests the model."""

import pytest

from tests.clean.test_analyzer_rules import _catalog
from visibility_assets.clean.analyzer import Analyzer


@pytest.fixture(scope="module")
def analyzer():
    return Analyzer(_catalog(), sentiment_model=None)


def sentiments(analyzer, answer: str, question: str = "企业上云选哪家云服务比较好？") -> dict[str, str]:
    analysis = analyzer.analyze(answer, question, "cloud")
    return {name: result.sentiment for name, result in analysis.mentioned.items()}


def test_praise_and_criticism(analyzer):
    assert sentiments(analyzer, "推荐阿里云，稳定可靠，生态完善。AWS 价格偏高，控制台复杂。") == {
        "阿里云": "positive", "AWS": "negative"}


def test_a_negator_turns_the_cue(analyzer):
    assert sentiments(analyzer, "企业选云服务，阿里云没有明显短板。华为云的服务并不可靠，也不稳定。") == {
        "阿里云": "positive", "华为云": "negative"}


def test_praise_then_but_criticism_is_neutral_unless_one_side_dominates(analyzer):
    assert sentiments(analyzer, "阿里云功能强大，但价格偏高，选择时要看预算。") == {"阿里云": "neutral"}
    assert sentiments(analyzer, "阿里云功能强大，但价格偏高、文档混乱、客服响应慢，选择时要谨慎。") == {"阿里云": "negative"}


def test_a_comparison_speaks_well_of_one_side_and_ill_of_the_other(analyzer):
    assert sentiments(analyzer, "在选择云服务方案时，阿里云比华为云更稳定。") == {"阿里云": "positive", "华为云": "negative"}
    assert sentiments(analyzer, "选择云服务方案时，华为云的生态不如阿里云丰富。") == {"华为云": "negative", "阿里云": "positive"}


def test_a_bare_comparison_without_a_word_for_the_aspect_still_ranks_the_two(analyzer):
    assert sentiments(analyzer, "选择云服务方案时，华为云目前仍不如阿里云。") == {"华为云": "negative", "阿里云": "positive"}
    assert sentiments(analyzer, "For a small team choosing cloud services, Huawei Cloud still lags behind AWS and"
                      " Alibaba Cloud on global regions and tooling.", "Which cloud services are best for a small team?"
                      ) == {"华为云": "negative", "AWS": "positive", "阿里云": "positive"}
    # with a word for the aspect, that word decides, once
    assert sentiments(analyzer, "选择云服务方案时，华为云的生态不如阿里云丰富。") == {"华为云": "negative", "阿里云": "positive"}


def test_an_option_is_judged_by_its_own_block(analyzer):
    answer = ("可以考虑以下方案：\n1. **阿里云**：市场份额领先，产品线完善。\n"
              "2. **AWS**：全球覆盖广，但国内访问延迟高、价格偏贵。\n3. **华为云**：政企客户多。")
    assert sentiments(analyzer, answer) == {"阿里云": "positive", "AWS": "negative", "华为云": "neutral"}


def test_advice_against_is_negative_and_cues_are_kept_per_mention(analyzer):
    analysis = analyzer.analyze("If you ask me, avoid AWS for a small team; Alibaba Cloud is reliable and affordable.",
                                "Which cloud provider should a small team pick?", "cloud")
    assert analysis.mentioned["AWS"].sentiment == "negative"
    assert analysis.mentioned["阿里云"].sentiment == "positive"
    assert "+reliable" in analysis.mentioned["阿里云"].sentiment_cues
    assert [m.label for m in analysis.mentioned["阿里云"].mention_sentiments] == ["positive"]


def test_words_out_of_scope_are_no_cues(analyzer):
    # The matcher's pass reads the whole text; a think block or a URL is no part of the body.
    assert sentiments(analyzer, "<think>阿里云很差，不稳定。</think>\n企业上云，阿里云的云服务稳定可靠。") == {"阿里云": "positive"}
    answer = "企业上云可以看 AWS 的云服务，详见 https://example.com/best-excellent-cloud 的评测。"
    assert analyzer.analyze(answer, "企业上云选哪家云服务比较好？", "cloud").mentioned["AWS"].sentiment_cues == ()


def test_a_longer_cue_holds_the_shorter_one_inside_it(analyzer):
    analysis = analyzer.analyze("企业上云选云服务，阿里云不推荐给小团队。", "企业上云选哪家云服务比较好？", "cloud")
    assert analysis.mentioned["阿里云"].sentiment_cues == ("-不推荐", "-advised against")


def test_latin_contrast_and_comparison_words_count_only_as_whole_words(analyzer):
    question = "Which cloud provider should a startup choose?"
    assert sentiments(analyzer, "For a startup's cloud, AWS is great and reliable, but slow.", question) == {
        "AWS": "neutral"}
    assert sentiments(analyzer, "For a startup's cloud, AWS is great and reliable, butter is slow.", question) == {
        "AWS": "positive"}
    assert sentiments(analyzer, "For a startup's cloud, AWS is a better choice than Alibaba Cloud.", question) == {
        "AWS": "positive", "阿里云": "negative"}
    assert sentiments(analyzer, "For a startup's cloud, AWS is a better choice thanks to Alibaba Cloud.", question) == {
        "AWS": "positive", "阿里云": "positive"}


def test_every_word_the_sentiment_rules_read_has_one_role():
    from visibility_assets.clean.cues import LEXICON, MARKERS
    from visibility_assets.clean.lexicon import CONTRASTS, FLIPS_AFTER, FLIPS_BEFORE

    assert len(MARKERS) == len(set(MARKERS)) == len(LEXICON) + len(CONTRASTS) + len(FLIPS_AFTER) + len(FLIPS_BEFORE)
