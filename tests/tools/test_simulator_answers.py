"""Tests for visibility_assets.tools.simulator.answers (the simulated platform's answer texts)."""

from __future__ import annotations

import collections
import os
import random
import re
import subprocess
import sys
from datetime import date, timedelta
from pathlib import Path

import pytest

from visibility_assets.tools.simulator.answers import (
    KINDS,
    KNOWN_PLATFORMS,
    STRUCTURES,
    ComposedAnswer,
    PlatformStyle,
    SimBrand,
    brand_weights,
    compose_answer,
    compose_answer_detailed,
    style_for,
)

REPO_ROOT = Path(__file__).resolve().parents[2]

CLOUD = (
    SimBrand("阿里云", ("阿里云", "Alibaba Cloud", "Aliyun"), ("aliyun.com",)),
    SimBrand("腾讯云", ("腾讯云", "Tencent Cloud"), ("cloud.tencent.com",)),
    SimBrand("华为云", ("华为云", "Huawei Cloud"), ("huaweicloud.com",)),
    SimBrand("AWS", ("AWS", "Amazon Web Services", "亚马逊云科技"), ("aws.amazon.com",)),
    SimBrand("Azure", ("Azure", "Microsoft Azure", "微软云"), ("azure.microsoft.com",)),
    SimBrand("百度智能云", ("百度智能云", "Baidu AI Cloud"), ("cloud.baidu.com",)),
    SimBrand("火山引擎", ("火山引擎", "Volcano Engine", "Volcengine"), ("volcengine.com",)),
)
CRM = (
    SimBrand("Salesforce", ("Salesforce", "SFDC"), ("salesforce.com",)),
    SimBrand("HubSpot", ("HubSpot",), ("hubspot.com",)),
    SimBrand("Zoho CRM", ("Zoho CRM", "Zoho"), ("zoho.com",)),
    SimBrand("Pipedrive", ("Pipedrive",), ("pipedrive.com",)),
    SimBrand("纷享销客", ("纷享销客", "Fxiaoke", "ShareCRM"), ("fxiaoke.com",)),
    SimBrand("销售易", ("销售易", "Neocrm"), ("xiaoshouyi.com",)),
)
ZH_Q = "中小企业用哪家云服务器比较好？"
EN_Q = "Which cloud platform is best for a startup?"
PLATFORMS = KNOWN_PLATFORMS + ("acme-ai",)

_CJK = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff]")
_URL = re.compile(r"https?://[^\s)\]）]+")
_FULLWIDTH = str.maketrans({chr(c): chr(c + 0xFEE0) for c in range(0x21, 0x7F)})


def _draw(platform: str, question: str, brands=CLOUD, n: int = 2000, seed: int = 1, day: str | None = None):
    rng = random.Random(seed)
    return [compose_answer_detailed(rng, question, brands, platform, day) for _ in range(n)]


def _alias_in(text: str, alias: str) -> bool:
    """Whole-word match for Latin aliases (so "flaws" is not AWS), substring for CJK ones."""
    forms = (alias, alias.translate(_FULLWIDTH))
    for form in forms:
        if _CJK.search(form) or not form.isascii():
            if form in text:
                return True
        elif re.search(r"(?<![A-Za-z0-9])" + re.escape(form) + r"(?![A-Za-z0-9])", text):
            return True
    return False


# ----------------------------------------------------------------------------- determinism


@pytest.mark.parametrize("platform", PLATFORMS)
def test_same_seed_same_text(platform):
    for seed in range(60):
        for q in (ZH_Q, EN_Q):
            a = compose_answer(random.Random(seed), q, CLOUD, platform, "2025-03-01")
            b = compose_answer(random.Random(seed), q, CLOUD, platform, "2025-03-01")
            assert a == b


def test_same_rng_state_continues_deterministically():
    r1, r2 = random.Random(5), random.Random(5)
    seq1 = [compose_answer(r1, ZH_Q, CLOUD, "qwen") for _ in range(50)]
    seq2 = [compose_answer(r2, ZH_Q, CLOUD, "qwen") for _ in range(50)]
    assert seq1 == seq2


def test_different_seeds_give_different_texts():
    texts = [compose_answer(random.Random(seed), ZH_Q, CLOUD, "deepseek") for seed in range(200)]
    # a few refusals/errors/empties may coincide; valid answers essentially never do
    assert len(set(texts)) >= 170


@pytest.mark.system
def test_deterministic_across_processes_and_hash_seeds():
    code = (
        "import random, hashlib\n"
        "from visibility_assets.tools.simulator.answers import SimBrand, compose_answer, style_for, brand_weights\n"
        "B = (SimBrand('阿里云', ('阿里云', 'Alibaba Cloud'), ('aliyun.com',)),\n"
        "     SimBrand('AWS', ('AWS', 'Amazon Web Services'), ('aws.amazon.com',)),\n"
        "     SimBrand('Azure', ('Azure', '微软云'), ('azure.microsoft.com',)))\n"
        "h = hashlib.sha256()\n"
        "for p in ('kimi', 'acme-ai'):\n"
        "    r = random.Random(3)\n"
        "    for i in range(300):\n"
        "        h.update(compose_answer(r, ('云服务怎么选？', 'Best cloud?')[i % 2], B, p, '2025-05-0' + str(1 + i % 9)).encode())\n"
        "    h.update(repr(style_for(p)).encode()); h.update(repr(brand_weights(p, B, '2025-05-01')).encode())\n"
        "print(h.hexdigest())\n"
    )
    outs = set()
    for hash_seed in ("0", "1", "12345"):
        env = dict(os.environ, PYTHONHASHSEED=hash_seed, PYTHONPATH=str(REPO_ROOT))
        res = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
        outs.add(res.stdout.strip())
    assert len(outs) == 1


# ----------------------------------------------------------------------------- language


@pytest.mark.parametrize("platform", PLATFORMS)
def test_language_follows_question(platform):
    zh = _draw(platform, ZH_Q, n=400, seed=2)
    en = _draw(platform, EN_Q, n=400, seed=2)
    assert all(a.language == "zh" for a in zh)
    assert all(a.language == "en" for a in en)
    for a in zh:
        if a.kind in ("answer", "refusal", "irrelevant"):
            assert _CJK.search(a.text), a.text
    zh_ratio, en_ratio = [], []
    for a in en:
        if a.kind == "refusal":
            assert not _CJK.search(a.text)
        if a.kind == "answer":
            body = a.text.split("</think>", 1)[-1].strip()
            first_line = body.splitlines()[0]
            assert not _CJK.search(first_line), first_line
            en_ratio.append(len(_CJK.findall(a.text)) / len(a.text))
    for a in zh:
        if a.kind == "answer":
            zh_ratio.append(len(_CJK.findall(a.text)) / len(a.text))
    assert sum(en_ratio) / len(en_ratio) < 0.05
    assert sum(zh_ratio) / len(zh_ratio) > 0.4


def test_any_cjk_character_makes_a_chinese_answer():
    a = compose_answer_detailed(random.Random(0), "Is 阿里云 better than AWS?", CLOUD, "kimi")
    assert a.language == "zh"
    a = compose_answer_detailed(random.Random(0), "Is Alibaba Cloud better than AWS?", CLOUD, "kimi")
    assert a.language == "en"


# ----------------------------------------------------------------------------- shares of kinds


@pytest.mark.parametrize("platform", PLATFORMS)
def test_kind_shares_in_sensible_bands(platform):
    answers = _draw(platform, ZH_Q, n=1000, seed=11) + _draw(platform, EN_Q, n=1000, seed=12)
    counts = collections.Counter(a.kind for a in answers)
    share = {k: counts[k] / len(answers) for k in KINDS}
    assert 0.015 <= share["refusal"] <= 0.08, share
    assert 0.005 <= share["empty"] <= 0.05, share
    assert 0.005 <= share["error"] <= 0.05, share
    assert 0.005 <= share["irrelevant"] <= 0.05, share
    assert 0.80 <= share["answer"] <= 0.95, share
    for a in answers:
        if a.kind == "empty":
            assert a.text.strip() == ""
        else:
            assert a.text.strip(), a
        if a.kind in ("refusal", "error", "irrelevant"):
            assert a.options == () and a.mentioned == ()


def test_valid_answers_have_realistic_length_and_no_template_leftovers():
    lengths = []
    for platform in PLATFORMS:
        for a in _draw(platform, ZH_Q, n=300, seed=4) + _draw(platform, EN_Q, n=300, seed=4):
            if a.kind != "answer":
                continue
            assert "{" not in a.text and "}" not in a.text, a.text
            assert "None" not in a.text
            lengths.append(len(a.text))
    lengths.sort()
    median = lengths[len(lengths) // 2]
    inside = sum(250 <= x <= 1800 for x in lengths) / len(lengths)
    assert 300 <= median <= 1200
    assert inside >= 0.8


# ----------------------------------------------------------------------------- structures


_STRUCT_CHECK = {
    "numbered": re.compile(r"^1\. ", re.M),
    "bullets": re.compile(r"^[-*] ", re.M),
    "table": re.compile(r"^\|\s*:?-{3,}", re.M),
    "headings": re.compile(r"^#{3,4} \S", re.M),
    "bold_lines": re.compile(r"^(?:\S+ )?\*\*[^*\n]+\*\*$", re.M),
}


@pytest.mark.parametrize("platform", PLATFORMS)
def test_every_structure_appears(platform):
    answers = _draw(platform, ZH_Q, n=1000, seed=21) + _draw(platform, EN_Q, n=1000, seed=22)
    seen = collections.Counter(a.structure for a in answers if a.kind == "answer")
    assert set(seen) == set(STRUCTURES), seen
    for a in answers:
        if a.kind == "answer" and a.structure in _STRUCT_CHECK:
            assert _STRUCT_CHECK[a.structure].search(a.text), (a.structure, a.text)
        if a.kind == "answer" and a.structure == "prose":
            assert not _STRUCT_CHECK["table"].search(a.text)


@pytest.mark.slow  # over a second by design
def test_platform_preferences_show():
    def share(platform, structure):
        answers = [a for a in _draw(platform, ZH_Q, n=1500, seed=31) if a.kind == "answer"]
        return sum(a.structure == structure for a in answers) / len(answers)

    assert share("doubao", "table") > share("ernie", "table") + 0.15
    assert share("ernie", "numbered") > share("doubao", "numbered") + 0.15
    assert share("qwen", "headings") > share("hunyuan", "headings") + 0.15


# ----------------------------------------------------------------------------- content features


@pytest.mark.slow  # over a second by design
def test_citations_think_against_and_traps():
    kimi = [a for a in _draw("kimi", ZH_Q, n=1500, seed=41) if a.kind == "answer"]
    cited = [a for a in kimi if a.cited]
    assert 0.55 <= len(cited) / len(kimi) <= 0.85
    assert any("[^1^]" in a.text or "[^2^]" in a.text for a in cited)
    assert any(h in a.text for a in cited for h in ("参考资料", "参考来源", "引用："))
    assert any("zhihu.com" in a.text or "36kr.com" in a.text or "csdn.net" in a.text for a in cited)
    assert any("aliyun.com" in a.text or "volcengine.com" in a.text for a in cited)

    ds = [a for a in _draw("deepseek", EN_Q, n=1500, seed=42) if a.kind == "answer"]
    thinking = [a for a in ds if a.has_think]
    assert 0.2 <= len(thinking) / len(ds) <= 0.5
    for a in thinking:
        assert a.text.startswith("<think>\n") and "\n</think>\n" in a.text
    assert any("[citation:" in a.text for a in ds)
    assert not any(a.has_think for a in _draw("doubao", ZH_Q, n=500, seed=43))

    for platform, q in (("ernie", ZH_Q), ("hunyuan", EN_Q)):
        valid = [a for a in _draw(platform, q, n=2000, seed=44) if a.kind == "answer"]
        against = [a for a in valid if a.advised_against]
        assert 0.05 <= len(against) / len(valid) <= 0.16
        assert any(set(a.advised_against) & set(a.options) for a in against)
        assert any(not set(a.advised_against) & set(a.options) for a in against)
        neg = ("不推荐", "不建议", "不太推荐") if q == ZH_Q else ("avoid", "Skip", "skip", "wouldn't recommend", "steer clear")
        for a in against:
            assert any(w in a.text for w in neg), a.text

    zh_all = "\n".join(a.text for a in _draw("qwen", ZH_Q, n=3000, seed=45))
    en_all = "\n".join(a.text for a in _draw("qwen", EN_Q, n=3000, seed=45))
    for trap in ("苹果", "小米粥", "理想的选择", "唯一加分项", "ＡＷＳ"):
        assert trap in zh_all, trap
    for trap in ("the notion that", "flaws", "apples"):
        assert trap in en_all, trap
    assert "](https://" in zh_all and "](https://" in en_all  # markdown links in the body or references


@pytest.mark.slow  # over a second by design
def test_ground_truth_matches_text():
    for platform in PLATFORMS:
        for q, brands in ((ZH_Q, CLOUD), (EN_Q, CLOUD), ("最好用的 CRM 系统有哪些？", CRM), ("Best CRM for a small business?", CRM)):
            by_name = {b.name: b for b in brands}
            for a in _draw(platform, q, brands=brands, n=300, seed=51):
                if a.kind != "answer":
                    continue
                no_urls = _URL.sub(" ", a.text)
                assert set(a.options) <= set(a.mentioned)
                assert set(a.advised_against) <= set(a.mentioned)
                assert set(a.think_mentions) <= set(a.mentioned)
                for name in a.mentioned:
                    b = by_name[name]
                    assert any(_alias_in(no_urls, x) for x in (b.name,) + b.aliases), (name, a.text)
                for name in set(by_name) - set(a.mentioned):
                    b = by_name[name]
                    assert not any(_alias_in(no_urls, x) for x in (b.name,) + b.aliases), (name, a.text)
                for name in a.url_only:
                    assert name not in a.mentioned
                    assert any(d in a.text for d in by_name[name].domains) or "g2.com/compare" in a.text


def test_option_counts_and_untracked_options():
    valid = [a for a in _draw("qwen", ZH_Q, n=3000, seed=61) if a.kind == "answer"]
    counts = collections.Counter(len(a.options) for a in valid)
    assert counts[0] > 0 and counts[1] > 0
    assert sum(counts[k] for k in range(2, 8)) / len(valid) > 0.7
    none_tracked = [a for a in valid if not a.options]
    assert all(a.other_options for a in none_tracked)
    # varying aliases: in Chinese answers, Alibaba Cloud is usually 阿里云 but not always
    texts = [a.text for a in valid if "阿里云" in a.options]
    assert sum("阿里云" in t for t in texts) / len(texts) > 0.8
    assert any("Alibaba Cloud" in t or "Aliyun" in t for t in texts)
    assert any("阿里云（Alibaba Cloud）" in t or "阿里云（Aliyun）" in t for t in texts)


def test_question_naming_brands_makes_them_options():
    valid = [a for a in _draw("ernie", "AWS 和 Azure 哪个更适合出海？", n=500, seed=71) if a.kind == "answer"]
    share = sum({"AWS", "Azure"} <= set(a.options) for a in valid) / len(valid)
    assert share > 0.75


def test_edge_inputs():
    rng = random.Random(9)
    odd = (SimBrand("Acme", (), ()), SimBrand("某品牌{x}", ("某品牌{x}",), ("x.cn",)))
    for _ in range(300):
        for brands in ((), CLOUD[:1], odd):
            a = compose_answer_detailed(rng, "推荐一个？", brands, "mystery", None)
            assert isinstance(a, ComposedAnswer) and isinstance(a.text, str)
            b = compose_answer(rng, "", brands, "", "not-a-date")
            assert isinstance(b, str)
    assert brand_weights("kimi", []) == {}


# ----------------------------------------------------------------------------- brand weights


def test_brand_weights_deterministic_and_positive():
    w1 = brand_weights("kimi", CLOUD, "2025-03-01")
    w2 = brand_weights("kimi", list(CLOUD), "2025-03-01")
    assert w1 == w2
    assert list(w1) == [b.name for b in CLOUD]
    assert all(v > 0 for v in w1.values())
    assert brand_weights("Kimi", CLOUD) == brand_weights("kimi", CLOUD)


def test_platforms_favour_different_brands():
    tops = set()
    vectors = set()
    for p in KNOWN_PLATFORMS:
        w = brand_weights(p, CLOUD)
        tops.add(max(w, key=w.get))
        vectors.add(tuple(round(v, 6) for v in w.values()))
        w = brand_weights(p, CRM)
        vectors.add(tuple(round(v, 6) for v in w.values()))
    assert len(tops) >= 3
    assert len(vectors) == 2 * len(KNOWN_PLATFORMS)
    # the favouritism shows in what the answers actually mention
    most = set()
    for p in ("qwen", "hunyuan", "doubao", "ernie"):
        c = collections.Counter(n for a in _draw(p, ZH_Q, n=800, seed=81) for n in a.options)
        most.add(c.most_common(1)[0][0])
    assert len(most) >= 3


def test_brand_weights_drift_with_day():
    start = date(2025, 1, 1)
    days = [(start + timedelta(i)).isoformat() for i in range(90)]
    for p in PLATFORMS:
        series = [brand_weights(p, CLOUD, d) for d in days]
        assert series[0] != series[30]
        assert brand_weights(p, CLOUD, None) == brand_weights(p, CLOUD)
        # slow drift: most day-over-day changes are small ...
        small = big = 0
        for prev, cur in zip(series, series[1:]):
            for name in prev:
                ratio = cur[name] / prev[name]
                if 0.85 <= ratio <= 1.15:
                    small += 1
                elif ratio >= 2 or ratio <= 0.5:
                    big += 1
        # ... but one brand per platform has visible step changes
        assert big >= 4, p
        assert small / (len(series) - 1) / len(CLOUD) > 0.8


def test_step_change_visible_in_answers():
    p = "kimi"
    start = date(2025, 1, 1)
    days = [(start + timedelta(i)).isoformat() for i in range(60)]
    series = [brand_weights(p, CLOUD, d) for d in days]
    name, i = max(
        ((n, i) for i in range(1, len(series)) for n in series[i]),
        key=lambda t: abs(series[t[1]][t[0]] / series[t[1] - 1][t[0]] - 1),
    )
    before, after = days[i - 1], days[i]

    def rate(day):
        ans = [a for a in _draw(p, ZH_Q, n=800, seed=91, day=day) if a.kind == "answer"]
        return sum(name in a.options for a in ans) / len(ans)

    assert abs(rate(before) - rate(after)) > 0.1


# ----------------------------------------------------------------------------- styles


def test_style_for_unknown_name_is_stable():
    a = style_for("acme-ai")
    style_for.cache_clear()
    b = style_for("acme-ai")
    assert a == b and a is not b
    assert isinstance(a, PlatformStyle)
    assert style_for("acme-ai") != style_for("other-bot")
    assert 0 < a.citation_rate < 1 and 0 <= a.think_rate < 1
    assert a.citation_marker in ("bracket", "caret", "citation", "footnote")


def test_known_styles_are_distinct_and_characteristic():
    styles = {p: style_for(p) for p in KNOWN_PLATFORMS}
    assert len({repr({k: v for k, v in vars(s).items() if k != "platform"}) for s in styles.values()}) == 6
    assert styles["deepseek"].think_rate > 0.2
    assert styles["kimi"].citation_marker == "caret" and styles["kimi"].citation_rate >= 0.6
    assert dict(styles["doubao"].structure_weights)["table"] == max(dict(styles["doubao"].structure_weights).values())
    assert dict(styles["ernie"].structure_weights)["numbered"] == max(dict(styles["ernie"].structure_weights).values())
    assert dict(styles["qwen"].structure_weights)["headings"] == max(dict(styles["qwen"].structure_weights).values())
    assert style_for("DeepSeek").think_rate == styles["deepseek"].think_rate
    assert style_for("qwen-max").structure_weights == styles["qwen"].structure_weights
