"""Answer forms the analyzer once got wrong (docs/analysis.md), one short test each."""

import pytest

from tests.clean.test_analyzer_rules import _run
from visibility_assets.clean.analyzer import Analyzer
from visibility_assets.config import EXAMPLE_CONFIG_DIR, load_catalog


@pytest.mark.parametrize("answer", [
    '{"error": {"message": "Rate limit reached for requests", "type": "requests", "code": "rate_limit_exceeded"}}',
    '{"error": {"message": "Rate limit reached for gpt-4o in organization org-abc123 on tokens per min (TPM): '
    'Limit 30000, Used 29000, Requested 2400. Please try again in 2.8s. Visit '
    'https://platform.openai.com/account/rate-limits to learn more. AWS Alibaba Cloud", "type": "tokens", '
    '"param": null, "code": "rate_limit_exceeded"}}',
    "Error code: 429 - {'error': {'message': 'Rate limit reached for requests', 'type': 'requests', "
    "'param': None, 'code': 'rate_limit_exceeded'}}",
    "API Error: 503 Service Unavailable",
    "请求频率超限，请稍后再试。(错误码: 429)",
    "请求频率超限（错误码：429）",
    "抱歉，服务暂时不可用（错误码 503）",
])
def test_error_text_quoting_a_rate_limit_or_api_error_is_an_error(answer):
    result = _run(answer)
    assert (result.valid, result.invalid_reason) == (False, "error")


def test_not_cheap_is_not_a_refusal_but_declining_to_comment_is():
    assert _run("阿里云并不便宜，操作也不便利，但稳定，推荐企业使用。").valid
    for answer in ("这个问题我不便透露。", "我不便评价各家云服务。", "抱歉，不便回答。"):
        assert _run(answer).invalid_reason == "refusal"


@pytest.mark.parametrize("options", [
    "✅ 自建：灵活\n✅ 阿里云：生态好\n✅ AWS：全球化，可替代华为云",
    "👉 自建：灵活\n👉 **阿里云**：生态好\n👉 AWS：全球化，可替代华为云",
    "▶️ 自建：灵活\n▶️ 阿里云：生态好\n▶️ AWS：全球化，可替代华为云",
    "🔹 自建：灵活\n🔹 阿里云：生态好\n🔹 AWS：全球化，可替代华为云",
    "1️⃣ 自建：灵活\n2️⃣ 阿里云：生态好\n3️⃣ AWS：全球化，可替代华为云",
    "一、自建\n灵活。\n二、阿里云\n生态好。\n三、AWS\n全球化，可替代华为云。",
    "（一）自建：灵活\n（二）阿里云：生态好\n（三）AWS：全球化，可替代华为云",
    "1）自建：灵活\n2）阿里云：生态好\n3）AWS：全球化，可替代华为云",
    "### 1. 自建\n灵活。\n### 2. 阿里云\n生态好。\n### 3. AWS\n全球化，可替代华为云。",
    "## 方案一：自建\n灵活。\n## 方案二：阿里云\n生态好。\n## 方案三：**AWS**\n全球化，可替代华为云。",
    "## Option 1: Self-hosted\nflexible\n## Option 2: Alibaba Cloud\ngood\n## Option 3: AWS\nglobal, like 华为云",
    "**1. 自建**\n\n灵活。\n\n**2. 阿里云**\n\n生态好。\n\n**3. AWS**\n\n全球化，可替代华为云。",
])
def test_option_lists_in_other_markup_rank_every_item(options):
    result = _run("推荐如下：\n\n" + options)
    assert (result.brand("阿里云").list_rank, result.brand("AWS").list_rank, result.brand("华为云").list_rank) == (2, 3, None)


def test_a_single_warning_line_is_not_an_option_list():
    result = _run("推荐阿里云，稳定可靠。\n\n⚠️ AWS 价格偏高，需要注意。\n\n✅ 华为云也可以考虑。")
    assert result.option_list_kind is None and result.brand("AWS").list_rank is None


def test_a_numbered_sub_list_under_chinese_sections_is_its_own_list():
    answer = "一、背景\n企业上云需求增加。\n二、推荐方案\n1. 阿里云：生态好\n2. AWS：全球化\n三、总结\n按需选择。"
    result = _run(answer)
    assert (result.brand("阿里云").list_rank, result.brand("AWS").list_rank) == (1, 2)


@pytest.mark.parametrize("answer", [
    "阿里云的优势：\n1. 稳定\n2. 便宜\n3. 华为云生态也不错",
    "阿里云的主要缺点：\n- 价格\n- 华为云更便宜",
    "Pros of Alibaba Cloud:\n- stable\n- Huawei Cloud is close but pricier",
])
def test_a_list_of_one_brands_qualities_ranks_nobody(answer):
    result = _run(answer)
    assert result.valid
    assert result.brand("华为云").list_rank is None and result.brand("阿里云").list_rank is None


def test_a_qualities_list_does_not_hide_the_real_option_list_after_it():
    answer = "阿里云的优势：\n1. 稳定\n2. 华为云生态也不错\n\n推荐顺序：\n\n- 自建\n- AWS\n- 华为云"
    result = _run(answer)
    assert (result.brand("AWS").list_rank, result.brand("华为云").list_rank) == (2, 3)


@pytest.mark.parametrize("advice", [
    "AWS……不太建议作为首选。",
    "AWS 价格偏高，就不列入推荐了。",
    "AWS 就不列入推荐了。",
    "AWS？不推荐。",
    "AWS is one I'd steer clear of for this budget.",
    "I'd steer clear of AWS here.",
])
def test_advice_against_a_brand_after_or_before_its_name(advice):
    result = _run("推荐如下：\n1. 阿里云：稳定\n2. 华为云：便宜\n\n" + advice)
    assert result.brand("AWS").recommended is False
    assert result.brand("阿里云").recommended is True


def test_advice_after_the_name_does_not_outweigh_an_option_or_reach_another_sentence():
    result = _run("推荐如下：\n1. 阿里云：稳定\n2. AWS：全球化\n\nAWS 的旧实例就不列入推荐了。")
    assert result.brand("AWS").recommended is True  # also presented as an option
    result = _run("推荐阿里云吗？当然。华为云也不错，不推荐自建机房。")
    assert result.brand("阿里云").recommended is True and result.brand("华为云").recommended is True


EXAMPLE = Analyzer(load_catalog(EXAMPLE_CONFIG_DIR / "brands.yaml"))


def test_a_capitalised_name_written_in_lower_case_is_the_common_word():
    result = EXAMPLE.analyze("Salesforce is the default for big teams, but no tool fixes a salesforce that skips"
                             " its notes.", "Is Salesforce good for big teams?", "crm")
    assert result.brand("Salesforce").mention_count == 1


@pytest.mark.parametrize(("question", "answer", "category"), [
    ("AWS 认证哪个最值得考？", "AWS（美国焊接学会）的认证在焊接行业认可度很高：先考 CW，再考 CWI，按 AWS D1.1 焊接规范实操。"
     "考点在上海、天津，费用约一万元，适合想转行做焊工或焊接检验的人，零基础也可以从最低一级开始准备。", "cloud"),
    ("Is Azure a good choice for a small business?", "Yes — azure is a great colour for a small business, "
     "especially if you want to look trustworthy. Azure (roughly #007FFF) is brighter than navy and reads as "
     "approachable; pair it with a warm accent such as coral for buttons, keep it for your logo and headings, "
     "and check contrast: white text on pure azure passes only at larger font sizes.", "cloud"),
    ("苹果和三星，哪个更适合送给长辈？", "送长辈的话，两者寓意都很好：\n\n🍎 **苹果**\n- 寓意平平安安，送一箱烟台红富士，"
     "实用又体面；牙口不好的老人可以选口感偏软的品种。\n\n⭐ **三星**\n- 指福、禄、寿三星，祝寿时送福禄寿三星摆件"
     "或字画最合适，陶瓷、铜制、木雕都有，放在客厅很有年味。\n\n**总结**：日常探望送苹果，大寿送三星摆件，两样一起送，"
     "寓意就是平安长寿，老人家一定会很开心。逢年过节上门探望，礼轻情意重，陪老人聊聊天，心意最要紧。", "phone"),
])
def test_an_answer_about_another_meaning_of_the_brand_is_off_topic(question, answer, category):
    result = EXAMPLE.analyze(answer, question, category)
    assert (result.valid, result.invalid_reason) == (False, "irrelevant")


@pytest.mark.parametrize("label", ["**阿里云的优势：**", "**Why Aliyun works for you:**", "**Pros of the Aliyun ECS:**"])
def test_a_bold_label_of_one_brands_qualities_is_no_option(label):
    answer = f"适合。\n\n{label}\n- 产品线全\n- 生态成熟\n\n**需要注意的地方：**\n- 续费贵\n\n腾讯云也可以对比。"
    assert EXAMPLE.analyze(answer, "阿里云适合中小企业吗？", "cloud").brand("阿里云").list_rank is None


@pytest.mark.parametrize("advice", [
    "As for Google Cloud, I would not go with it here.",
    "Google Cloud is overkill at your size: long setup and paid admin time. I'd skip it for now.",
    "Google Cloud 功能很完整，but for a small team, I would not go with it。",
    "Google Cloud 的话，不太建议你们考虑：实施周期长。",
    "Google Cloud 海外版很强，但对你来说 it's one I'd steer clear of。",
])
def test_advice_against_it_after_the_name(advice):
    answer = f"1. **AWS**：全球化\n2. **Azure**：企业集成\n\n{advice}"
    assert EXAMPLE.analyze(answer, "Which cloud?", "cloud").brand("Google Cloud").recommended is False


# --- Traditional Chinese: the catalog is Simplified, a Traditional answer names the same brands --

def test_a_traditional_answer_names_and_ranks_the_simplified_catalogs_brands():
    result = _run("推薦如下：\n\n1. **阿里雲**：生態完善，文檔齊全。\n2. **華為雲**：政企客戶多。\n3. AWS：全球覆蓋。\n\n"
                  "總結：中小企業首選阿里雲。")
    assert result.valid
    assert [(b, result.brand(b).mention_count, result.brand(b).list_rank) for b in ("阿里云", "华为云", "AWS")] == [
        ("阿里云", 2, 1), ("华为云", 1, 2), ("AWS", 1, 3)]


def test_a_traditional_cloud_name_is_still_the_longer_brand_and_the_grain_still_a_grain():
    phone = _run("華為 Mate 70 拍照出色；華為雲只是它的雲服務。小米粥不是手機，小米 15 才是。", "phone", "哪款手機好？")
    assert (phone.brand("华为").mention_count, phone.brand("小米").mention_count) == (1, 1)
    cloud = _run("華為雲適合政企客戶，華為的手機業務與此無關。")
    assert cloud.brand("华为云").mention_count == 1


def test_a_traditional_hit_points_at_the_characters_the_answer_wrote():
    answer = "我推薦阿里雲。"
    result = _run(answer)
    (start, end), = result.hit_spans
    assert answer[start:end] == "阿里雲"


def test_a_traditional_refusal_is_a_refusal():
    assert _run("抱歉，我無法回答這個問題。").invalid_reason == "refusal"


def test_an_alias_written_in_traditional_in_the_catalog_is_the_simplified_one(tmp_path):
    from tests.conftest import write_config
    from visibility_assets.config import ConfigError

    directory = write_config(tmp_path / "c", 8787)
    brands = directory / "brands.yaml"
    brands.write_text(brands.read_text(encoding="utf-8").replace("aliases: [腾讯云,", "aliases: [腾讯云, 阿里雲,", 1),
                      encoding="utf-8")
    with pytest.raises(ConfigError, match="阿里雲"):  # 阿里云's alias, written in Traditional for another brand
        load_catalog(brands)


# --- a list of options to avoid beside the recommended one ----------------------------------

@pytest.mark.parametrize("answer", [
    "### 推荐\n1. **阿里云**：文档全。\n2. **华为云**：优惠多。\n\n### 避坑\n- **AWS**：国内区需要企业资质，个人开发者别折腾。\n\n总之先用阿里云。",
    "**推荐：**\n1. 阿里云：文档全\n2. 华为云：优惠多\n\n**不推荐：**\n- AWS：门槛高\n",
    "推荐：\n1. 阿里云\n2. 华为云\n\n慎选：\n- AWS（国内区开户麻烦）\n",
    "**Recommended**\n1. **Alibaba Cloud** – best docs.\n2. **Huawei Cloud** – cheap.\n\n**Avoid**\n"
    "- **AWS** – the China regions need a business licence.\n\nStart with Alibaba Cloud.",
    "### Recommended\n1. Alibaba Cloud\n2. Huawei Cloud\n\n### Not recommended\n- AWS: overkill at this size\n",
])
def test_a_brand_only_in_the_avoid_list_is_advised_against_and_unranked(answer):
    result = _run(answer)
    assert (result.brand("AWS").recommended, result.brand("AWS").list_rank) == (False, None)
    assert (result.brand("阿里云").recommended, result.brand("阿里云").list_rank) == (True, 1)


def test_a_brand_in_both_lists_stays_a_recommended_option():
    result = _run("### 推荐\n1. 阿里云：稳定\n2. AWS：全球化\n\n### 避坑\n- AWS 的国内区：开户麻烦\n- 华为云的老机型\n\n按需选择。")
    assert (result.brand("AWS").recommended, result.brand("AWS").list_rank) == (True, 2)
    assert result.brand("华为云").recommended is False


def test_a_closing_sentence_after_the_avoid_list_is_not_in_it():
    result = _run("### 推荐\n1. 阿里云\n\n### 避坑\n- AWS：门槛高\n\n华为云也可以看看，优惠多。")
    assert (result.brand("AWS").recommended, result.brand("华为云").recommended) == (False, True)


# --- an error document or a long refusal where the answer should be ---------------------------

@pytest.mark.parametrize("answer", [
    "<html>\n<head><title>502 Bad Gateway</title></head>\n<body>\n<center><h1>502 Bad Gateway</h1></center>\n"
    "<hr><center>nginx</center>\n</body>\n</html>\n",
    "<!DOCTYPE html>\n<html><head><title>405</title></head><body><h2>很抱歉，您的访问被阻断。</h2>"
    "<p>当前网页正在被 阿里云 Web应用防火墙 保护。</p></body></html>",
    'Traceback (most recent call last):\n  File "/app/run.py", line 8, in run\n    ask("AWS vs 阿里云")\n'
    "openai.InternalServerError: Error code: 500",
    "java.net.SocketTimeoutException: Read timed out\n\tat java.base/sun.nio.ch.NioSocketImpl.timedRead(NioSocketImpl.java:288)\n"
    "\tat com.acme.AliyunClient.ask(AliyunClient.java:42)",
    "Exception in thread \"main\" java.lang.IllegalStateException: AWS client closed\n\tat com.acme.Main.main(Main.java:9)",
])
def test_an_error_page_or_a_traceback_returned_as_the_answer_is_an_error_naming_no_brand(answer):
    result = _run(answer)
    assert (result.valid, result.invalid_reason) == (False, "error")
    assert not result.brand("阿里云").mentioned and not result.brand("AWS").mentioned


def test_html_that_is_no_error_page_is_not_an_error():
    assert _run("<html><body><p>推荐阿里云，稳定可靠，文档齐全，适合中小企业上云。</p></body></html>").invalid_reason != "error"


@pytest.mark.parametrize(("question", "answer"), [
    ("Which is cheaper for my startup, AWS or Alibaba Cloud?",
     "I'm sorry, but I can't give a straight answer on whether AWS or Alibaba Cloud is cheaper for your startup. "
     "Cloud pricing depends on your workload, region, discounts and credits, and I don't have enough information to "
     "make a responsible comparison. I'd rather not point you to one provider and have it turn out to be the wrong "
     "call. I'd suggest using the official AWS and Alibaba Cloud pricing calculators with your expected usage, or "
     "asking both sales teams for a quote based on your architecture. Thank you for understanding."),
    ("阿里云和华为云哪个更安全？会不会泄露数据？",
     "抱歉，关于阿里云和华为云是否存在数据泄露风险，我无法给出判断。这类问题涉及未经证实的安全指控和各方的监管争议，"
     "我不便评价任何一家厂商。为了避免传播不准确的信息，我无法就阿里云、华为云的安全性做比较或推荐。如果您对数据安全有顾虑，"
     "建议参考国家权威机构发布的测评报告，或咨询专业的信息安全顾问，并结合贵公司的合规要求逐项核实两家的安全认证与审计报告，"
     "再做决定。云服务的安全性取决于配置、权限管理和运维习惯，同一家厂商在不同客户处的表现也可能差别很大，"
     "任何简单的结论都可能误导您的判断，因此我不便在这里替您下结论，也不对任何一方的产品做出背书或否定。"
     "再次感谢您的理解与支持，也欢迎您随时提出其他我可以帮助的问题。"),
])
def test_a_long_polite_refusal_repeating_the_questions_brands_is_a_refusal(question, answer):
    assert len(answer) > 300
    result = _run(answer, question=question)
    assert (result.valid, result.invalid_reason) == (False, "refusal")


def test_a_long_answer_that_declines_one_thing_and_then_answers_is_valid():
    answer = ("I'm sorry, but I can't give you live prices. That said, here is how the two compare for a startup: "
              "Alibaba Cloud has the cheaper entry instances in mainland China, while AWS has the larger free tier "
              "and more credits for startups through Activate. For a product aimed at China, start with Alibaba Cloud; "
              "for a global one, AWS. Both let you move later, so pick by where your users are.")
    assert _run(answer, question="AWS or Alibaba Cloud for a startup?").valid


def test_a_long_refusal_that_brings_in_another_brand_is_not_only_a_refusal():
    answer = ("I'm sorry, but I can't tell you whether AWS is cheaper for you. Pricing depends on workload and "
              "credits, and I don't have enough information about yours. Many startups in China pick Huawei Cloud for "
              "its discounts, and its sales team can quote a price for your architecture. I'd suggest asking both "
              "for a quote based on your expected usage and comparing the totals over a year of running.")
    assert _run(answer, question="Is AWS cheaper for my startup?").invalid_reason != "refusal"


# --- a list of dates, incidents or topics is no option list -----------------------------------

@pytest.mark.parametrize("answer", [
    "影响较大的故障：\n\n- 2023年11月：阿里云大规模宕机。\n- 2024年4月：华为云控制台异常。\n- 2024年7月：AWS 新加坡区故障。\n\n做好多可用区部署更重要。",
    "The biggest outages:\n\n1. **July 19 – Azure**: a faulty update took down Alibaba Cloud mirrors.\n"
    "2. **October 24 – AWS us-east-1**: half a day down.\n3. **Dec 3 – Huawei Cloud**: a storage fault.\n",
    "Notable outages:\n\n- **AWS**: in December 2023 a region outage.\n- **Alibaba Cloud**: in November 2023 the console "
    "went down.\n- **Huawei Cloud**: in 2024 a storage fault.\n",
])
def test_a_timeline_of_events_ranks_no_brand(answer):
    result = _run(answer, question="各家云服务最近出过哪些故障？ Which outages did they have?")
    assert result.valid
    assert [result.brand(b).list_rank for b in ("阿里云", "AWS", "华为云")] == [None, None, None]


def test_a_timeline_does_not_hide_the_real_option_list_after_it():
    answer = ("近年故障：\n- 2023年11月：阿里云宕机\n- 2024年7月：AWS 故障\n\n仍然推荐：\n1. 华为云：稳定\n2. 阿里云：生态全\n")
    result = _run(answer)
    assert (result.brand("华为云").list_rank, result.brand("阿里云").list_rank, result.brand("AWS").list_rank) == (1, 2, None)


def test_an_option_list_that_mentions_a_year_in_passing_is_still_an_option_list():
    answer = "推荐：\n1. 阿里云：2009 年成立，生态最全\n2. 华为云：政企客户多\n3. AWS：全球覆盖\n"
    result = _run(answer)
    assert [result.brand(b).list_rank for b in ("阿里云", "华为云", "AWS")] == [1, 2, 3]
