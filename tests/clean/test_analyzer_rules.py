"""Each analysis rule (docs/analysis.md) on a minimal answer, with the rule recorded for rejections."""

import pytest

from visibility_assets.clean.advice import (
    ADVICE_AGAINST_IT_VERBS,
    NEGATIVE_CUES_BEFORE,
    NEGATIVE_GATE_CUES,
    NEGATIVE_IN_CLAUSE_AFTER,
)
from visibility_assets.clean.analyzer import Analyzer
from visibility_assets.config import Brand, BrandCatalog


def _catalog() -> BrandCatalog:
    brands = [
        Brand(name="阿里云", category="cloud", aliases=("阿里云", "Alibaba Cloud", "Aliyun"), domains=("aliyun.com",)),
        Brand(name="AWS", category="cloud", aliases=("AWS", "Amazon Web Services"), domains=("aws.amazon.com",)),
        Brand(name="华为云", category="cloud", aliases=("华为云", "Huawei Cloud")),
        Brand(name="Apple", category="phone", aliases=("苹果", "Apple", "iPhone"), exclude_contexts=("苹果汁", "水果")),
        Brand(name="小米", category="phone", aliases=("小米", "Xiaomi"), exclude_contexts=("小米粥", "millet")),
        Brand(name="华为", category="phone", aliases=("华为", "Huawei")),
        Brand(name="一加", category="phone", aliases=("一加", "OnePlus"), exclude_contexts=("唯一加",)),
        Brand(name="Zoho CRM", category="crm", aliases=("Zoho CRM", "Zoho")),
        Brand(name="Notion", category="crm", aliases=("Notion",), exclude_contexts=("the notion that",)),
    ]
    return BrandCatalog(tuple(brands), "test", None)


ANALYZER = Analyzer(_catalog())


def _run(answer, category="cloud", question="有哪些云服务推荐？"):
    return ANALYZER.analyze(answer, question, category)


def _count(answer, brand, category="cloud", question="有哪些推荐？"):
    return _run(answer, category, question).brand(brand).mention_count


def test_every_brand_of_the_category_is_in_the_output():
    output = _run("推荐阿里云。").as_json("x")
    assert set(output["brands"]) == {"阿里云", "AWS", "华为云"}
    assert output["brands"]["AWS"] == {"mentioned": False, "mention_count": 0, "first_mention_order": None,
                                       "list_rank": None, "recommended": None, "sentiment": None,
                                       "named_unknown": False}


def test_full_width_and_case_are_folded():
    assert _count("推荐使用ＡＷＳ和aws以及Aws。", "AWS") == 3


def test_latin_alias_must_not_touch_a_letter_but_may_touch_digits():
    result = _run("The flaws of lawsuits aside, I recommend AWS2 as the best cloud option.", "cloud", "best cloud?")
    assert result.brand("AWS").mention_count == 1
    assert [h.rule for h in result.hits if h.alias == "AWS"].count("boundary") == 2
    assert _count("iPhone16 是新款手机，适合推荐", "Apple", "phone") == 1


def test_longest_alias_wins_and_side_by_side_aliases_count_twice():
    assert _count("Zoho CRM is a good CRM option to recommend.", "Zoho CRM", "crm", "best crm?") == 1
    assert _count("推荐阿里云（Alibaba Cloud），性价比高。", "阿里云") == 2


def test_prefix_of_another_tracked_alias_never_counts_for_the_shorter_one():
    result = _run("华为云手机推荐：华为 Mate 系列值得考虑。", "phone", "买什么手机？")
    assert result.brand("华为").mention_count == 1
    assert any(h.rule == "overlapped_by:华为云" for h in result.hits if h.brand == "华为")


def test_exclude_contexts_inside_and_nearby():
    result = _run("早餐喝小米粥，手机推荐小米。", "phone", "买什么手机？")
    assert result.brand("小米").mention_count == 1
    assert any(h.rule == "exclude_context:小米粥" for h in result.hits)
    # 水果 within 12 characters rules out the first 苹果 only.
    assert _count("我爱吃苹果，这种水果很甜很甜，真的非常好吃；说到手机，推荐苹果。", "Apple", "phone", "买什么手机？") == 1
    assert _count("这是唯一加分项。", "一加", "phone", "手机推荐？") == 0
    assert _count("I reject the notion that Notion is slow; Notion is a good pick as a crm tool.", "Notion", "crm",
                  "best crm tool?") == 2


def test_scope_excludes_think_urls_domain_labels_and_reference_block():
    answer = ("<think>用户问云，想到 AWS</think>推荐阿里云，详见 https://aws.amazon.com/cn 和 [aliyun.com](https://aliyun.com)。\n\n"
              "参考资料：\n[1] AWS 官网 https://aws.amazon.com\n")
    result = _run(answer)
    assert result.brand("AWS").mention_count == 0
    assert result.brand("阿里云").mention_count == 1
    rules = {h.rule for h in result.hits}
    assert {"out_of_scope:think", "out_of_scope:url", "out_of_scope:references"} <= rules
    assert result.citations == ["https://aws.amazon.com/cn", "https://aliyun.com", "https://aws.amazon.com"]
    assert result.has_citation


def test_first_mention_order_and_list_rank():
    answer = ("根据你的需求推荐：\n\n1. **自建 MySQL**：灵活\n2. **华为云**：稳定\n   - 可与 AWS 对比\n3. **阿里云**：生态好\n\n"
              "总结：阿里云和华为云都不错。")
    result = _run(answer)
    assert result.brand("华为云").first_mention_order == 1
    assert result.brand("AWS").first_mention_order == 2
    assert result.brand("阿里云").first_mention_order == 3
    assert result.brand("华为云").list_rank == 2  # the untracked option holds position 1
    assert result.brand("阿里云").list_rank == 3
    assert result.brand("AWS").list_rank is None  # only in a sub-bullet


@pytest.mark.parametrize("answer", [
    "| 方案 | 优势 |\n|---|---|\n| 自建 | 灵活 |\n| 阿里云 | 生态 |\n| AWS | 全球化，可替代华为云 |",
    "### 1. 自建\n灵活。\n### 2. 阿里云\n生态好。\n### 3. AWS\n全球化，可替代华为云。",
    "**自建**\n灵活。\n\n**阿里云**\n生态好。\n\n**AWS**\n全球化，可替代华为云。",
])
def test_tables_headings_and_bold_lines_are_option_lists(answer):
    result = _run("推荐如下：\n\n" + answer)
    assert (result.brand("阿里云").list_rank, result.brand("AWS").list_rank, result.brand("华为云").list_rank) == (2, 3, None)


def test_prose_only_answer_has_no_ranks():
    result = _run("我推荐阿里云，其次是 AWS，两者都适合企业使用。")
    assert result.brand("阿里云").list_rank is None and result.brand("AWS").list_rank is None


def test_advised_against_only_when_not_also_an_option():
    answer = "推荐如下：\n1. 阿里云：稳定\n2. AWS：全球化\n\n不推荐华为云，也不建议选择 AWS 的旧实例。"
    result = _run(answer)
    assert result.brand("华为云").recommended is False
    assert result.brand("AWS").recommended is True  # advised against, but also presented as an option
    assert result.brand("阿里云").recommended is True
    assert _run("I would avoid AWS for this; Alibaba Cloud is the better pick for cloud.").brand("AWS").recommended is False


@pytest.mark.parametrize(("answer", "reason"), [
    ("", "empty"), ("   \n\t ", "empty"), ("<think>嗯</think>", "empty"),
    ("抱歉，我无法回答这个问题。", "refusal"), ("I'm sorry, but I can't help with that request.", "refusal"),
    ("服务器繁忙，请稍后再试。", "error"), ("Error: rate limit exceeded, please retry later", "error"),
    ("今天北京天气晴，最高气温 22℃，适合户外活动。", "irrelevant"),
])
def test_invalid_answers_have_a_reason_and_no_mentions(answer, reason):
    result = _run(answer)
    assert (result.valid, result.invalid_reason) == (False, reason)
    assert not result.mentioned and result.citations == [] and not result.has_citation


def test_an_apology_that_goes_on_to_answer_is_valid():
    result = _run("抱歉让你久等了！推荐阿里云和 AWS，两者都很成熟。")
    assert result.valid and result.brand("阿里云").mentioned


def test_citation_markers_without_urls_count_as_citations_and_urls_lose_trailing_punctuation():
    assert _run("推荐阿里云[1]，稳定[^2^]。").has_citation
    assert _run("推荐阿里云[citation:3]。").has_citation
    assert _run("推荐阿里云，见 (https://example.com/a).").citations == ["https://example.com/a"]


def test_positions_map_back_to_the_original_text():
    answer = "温度 30℃ 时推荐ＡＷＳ。"
    result = _run(answer)
    hit = next(h for h, span in zip(result.hits, result.hit_spans) if h.brand == "AWS")
    start, end = result.hit_spans[result.hits.index(hit)]
    assert answer[start:end] == "ＡＷＳ"


def test_positions_map_back_across_characters_that_fold_to_several():
    """… folds to three characters, ℃ to two, and e plus an accent to one: hits after them still
    map back onto the brand as written, on the changed line and after it."""
    answer = "30℃ 时……推荐ＡＷＳ，其次阿里云…\n这一行不变：阿里云\ncafe\u0301… 然后 AWS…阿里云"
    result = _run(answer)
    spans = [span for hit, span in zip(result.hits, result.hit_spans) if hit.accepted]
    assert [answer[start:end] for start, end in spans] == ["ＡＷＳ", "阿里云", "阿里云", "AWS", "阿里云"]


def test_positions_map_back_when_growing_and_shrinking_characters_cancel_out():
    """… grows by two and each e with a separate accent would shrink by one: same length, shifted positions."""
    answer = "… 推荐 AWS，cafe\u0301 cafe\u0301"
    result = _run(answer)
    spans = [span for hit, span in zip(result.hits, result.hit_spans) if hit.accepted]
    assert [answer[start:end] for start, end in spans] == ["AWS"]


def test_every_negative_cue_the_rules_read_is_one_the_gate_finds():
    """Hits with no gate cue in reach are never read closely: a cue missing from the gate would never count."""
    cues = [*NEGATIVE_CUES_BEFORE, *NEGATIVE_IN_CLAUSE_AFTER.pattern.replace("\\b", "").split("|"), "避免", "不推荐", "不建议",
            *ADVICE_AGAINST_IT_VERBS]
    assert [cue for cue in cues if not any(gate in cue for gate in NEGATIVE_GATE_CUES)] == []


CANARY_QUESTION = "Describe, in a few points, what you can help a small team with."
CANARY_PROSE = ("I can help a small team plan its week, draft documents, summarise meetings and answer questions"
                " about the tools it uses, with each of these explained in plain sentences.")


@pytest.mark.parametrize(("lists", "kind"), [
    ("1. Plan the week\n2. Draft documents", "numbered"), ("* Plan the week\n* Draft documents", "bullet"),
    ("12) Plan the week\n13) Draft documents", "numbered"), ("1、计划一周\n2、起草文档", "numbered"),
    ("• Plan the week\n• Draft documents", "bullet"), ("Here is what:\n- Plan the week\n- Draft documents", "bullet"),
    ("| Task | How |\n|---|---|\n| Plan | weekly |\n| Draft | docs |", "table"),
])
def test_a_canary_answers_option_list_is_its_first_list_whatever_it_lists(lists, kind):
    """A canary prompt names no brand: its option_list_kind is the kind of its first list, what the
    model-change canary's list-use signal counts."""
    answer = _run(CANARY_PROSE + "\n\n" + lists, "canary", CANARY_QUESTION)
    assert answer.option_list_kind == kind
    assert _run(CANARY_PROSE, "canary", CANARY_QUESTION).option_list_kind is None


def test_a_brand_answers_list_that_offers_no_brand_is_no_option_list():
    answer = _run("选云服务要看：\n1. 价格\n2. 稳定性\n\n阿里云和 AWS 都可以考虑。")
    assert answer.valid and answer.option_list_kind is None and answer.brand("阿里云").list_rank is None
