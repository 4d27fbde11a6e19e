"""Realistic answer texts for the simulated AI platform.

The simulator server asks :func:`compose_answer` for the text of one chat completion.
Answers imitate how Chinese and Western assistants write in markdown: an intro, a list,
table, headings or bold lines naming a weighted random subset of the category's brands
(with varying aliases), sub-bullets that mention other brands in passing, a summary,
sometimes a ``<think>`` block, inline citation markers and a reference block, and now
and then a refusal, an empty answer, an error message or an off-topic reply.  Phrases
that trip naive substring matchers (苹果 the fruit, 小米粥, "the notion that", "flaws",
"理想的选择", "唯一加分项", full-width ＡＷＳ, brand names only inside URLs) are sprinkled in.

Everything is deterministic: the platform style and the brand weights are derived with
``hashlib`` (never ``hash()``), and all randomness of one answer comes from the ``rng``
passed in.  :func:`compose_answer_detailed` returns the same text together with the
ground truth (which brands are listed as options, which are mentioned at all, which are
advised against, which appear only inside URLs), which is handy for scoring extractors.

Standard library only.
"""

from __future__ import annotations

import hashlib
import math
import random
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import date
from functools import lru_cache

__all__ = [
    "SimBrand",
    "sim_brands_by_category",
    "PlatformStyle",
    "ComposedAnswer",
    "KNOWN_PLATFORMS",
    "STRUCTURES",
    "KINDS",
    "style_for",
    "brand_weights",
    "compose_answer",
    "compose_answer_detailed",
]


# --------------------------------------------------------------------------- data types


@dataclass(frozen=True)
class SimBrand:
    name: str  # standard name, e.g. "阿里云"
    aliases: tuple[str, ...]  # e.g. ("阿里云", "Alibaba Cloud", "Aliyun")
    domains: tuple[str, ...]  # e.g. ("aliyun.com",)


def sim_brands_by_category(catalog) -> dict[str, tuple[SimBrand, ...]]:
    """The brands of a BrandCatalog (config.py) as the generator takes them, per category."""
    return {category: tuple(SimBrand(b.name, tuple(b.aliases), tuple(b.domains)) for b in catalog.for_category(category))
            for category in catalog.categories}


#: Layouts a valid answer can take.
STRUCTURES: tuple[str, ...] = ("numbered", "bullets", "table", "headings", "bold_lines", "prose")

#: Kinds of answer text.
KINDS: tuple[str, ...] = ("answer", "refusal", "empty", "error", "irrelevant")

#: Platforms with a hand-written character; any other name gets a hash-derived style.
KNOWN_PLATFORMS: tuple[str, ...] = ("deepseek", "qwen", "ernie", "hunyuan", "doubao", "kimi")

_MARKER_KINDS = ("bracket", "caret", "citation", "footnote")  # [1]  [^1^]  [citation:1]  [^1]


@dataclass(frozen=True)
class PlatformStyle:
    """How one simulated platform tends to write; derive it with :func:`style_for`.

    All ``*_rate`` fields are probabilities per answer (``against_rate``, ``trap_rate``,
    ``citation_rate`` ... are per *valid* answer).
    """

    platform: str
    #: relative preference for each layout in :data:`STRUCTURES`
    structure_weights: tuple[tuple[str, float], ...]
    #: "###" or "####" for per-option headings
    heading_prefix: str = "###"
    #: share of heading layouts that number the options ("### 1. 腾讯云")
    numbered_headings: float = 0.6
    #: probability that list items put the option name in bold
    bold_names: float = 0.8
    #: probability that an item gets sub-bullets
    sub_bullet_rate: float = 0.3
    #: share of valid answers with citations
    citation_rate: float = 0.3
    #: one of "bracket" [1], "caret" [^1^], "citation" [citation:1], "footnote" [^1]
    citation_marker: str = "bracket"
    #: share of cited answers that end with a reference block
    reference_block_rate: float = 0.8
    #: share of answers that start with a <think>...</think> block
    think_rate: float = 0.0
    refusal_rate: float = 0.04
    empty_rate: float = 0.02
    error_rate: float = 0.02
    irrelevant_rate: float = 0.02
    #: share of valid answers that advise against one brand
    against_rate: float = 0.10
    #: share of valid answers containing a matcher trap phrase
    trap_rate: float = 0.3
    #: share of list items decorated with an emoji
    emoji_rate: float = 0.0
    #: share of first brand mentions written bilingually, "阿里云（Alibaba Cloud）"
    mixed_alias_rate: float = 0.12
    #: length multiplier, about 0.7 (terse) to 1.4 (wordy)
    verbosity: float = 1.0
    #: alias fragments of the platform's own ecosystem, which it favours a little
    home_keywords: tuple[str, ...] = ()
    _structure_cum: tuple[float, ...] = field(default=(), init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        total = 0.0
        cum = []
        lookup = dict(self.structure_weights)
        for s in STRUCTURES:
            total += max(0.0, float(lookup.get(s, 0.0)))
            cum.append(total)
        if total <= 0:
            cum = [float(i + 1) for i in range(len(STRUCTURES))]
            total = cum[-1]
        object.__setattr__(self, "_structure_cum", tuple(c / total for c in cum))


@dataclass(frozen=True)
class ComposedAnswer:
    """An answer text plus the ground truth of how it was built."""

    text: str
    kind: str  # one of KINDS
    language: str  # "zh" or "en"
    structure: str | None = None  # one of STRUCTURES for kind == "answer"
    options: tuple[str, ...] = ()  # tracked brand names listed as options, in list order
    other_options: tuple[str, ...] = ()  # untracked option labels (self-hosted, made-up products ...)
    mentioned: tuple[str, ...] = ()  # tracked brand names written anywhere (input order)
    think_mentions: tuple[str, ...] = ()  # tracked brand names written inside <think>
    advised_against: tuple[str, ...] = ()  # tracked brand names the answer advises against
    url_only: tuple[str, ...] = ()  # tracked brands whose domain/slug is in a URL but name never written
    cited: bool = False
    has_think: bool = False


# --------------------------------------------------------------------------- hashing helpers


def _digest(*parts: str) -> bytes:
    return hashlib.sha256("\x1f".join(parts).encode("utf-8")).digest()


def _unit(*parts: str) -> float:
    """A stable float in [0, 1) derived from the parts."""
    return int.from_bytes(_digest(*parts)[:8], "big") / 18446744073709551616.0


def _pkey(platform: str) -> str:
    return platform.strip().lower()


# --------------------------------------------------------------------------- platform styles


def _sw(numbered: float, bullets: float, table: float, headings: float, bold: float, prose: float):
    return (
        ("numbered", numbered),
        ("bullets", bullets),
        ("table", table),
        ("headings", headings),
        ("bold_lines", bold),
        ("prose", prose),
    )


_KNOWN_STYLE_ARGS: dict[str, dict] = {
    "deepseek": dict(
        structure_weights=_sw(0.24, 0.18, 0.12, 0.26, 0.10, 0.10),
        heading_prefix="###",
        numbered_headings=0.75,
        bold_names=0.9,
        sub_bullet_rate=0.40,
        citation_rate=0.30,
        citation_marker="citation",
        reference_block_rate=0.45,
        think_rate=0.35,
        refusal_rate=0.05,
        empty_rate=0.02,
        error_rate=0.03,
        irrelevant_rate=0.015,
        against_rate=0.11,
        trap_rate=0.30,
        emoji_rate=0.0,
        mixed_alias_rate=0.15,
        verbosity=1.15,
        home_keywords=("深度求索", "deepseek"),
    ),
    "qwen": dict(
        structure_weights=_sw(0.18, 0.14, 0.12, 0.42, 0.06, 0.08),
        heading_prefix="###",
        numbered_headings=0.7,
        bold_names=0.85,
        sub_bullet_rate=0.45,
        citation_rate=0.35,
        citation_marker="bracket",
        reference_block_rate=0.85,
        think_rate=0.10,
        refusal_rate=0.04,
        empty_rate=0.02,
        error_rate=0.02,
        irrelevant_rate=0.02,
        against_rate=0.09,
        trap_rate=0.30,
        emoji_rate=0.05,
        mixed_alias_rate=0.18,
        verbosity=1.2,
        home_keywords=("阿里", "alibaba", "aliyun", "钉钉", "dingtalk", "通义", "淘宝", "支付宝", "alipay", "夸克"),
    ),
    "ernie": dict(
        structure_weights=_sw(0.46, 0.14, 0.10, 0.10, 0.10, 0.10),
        heading_prefix="####",
        numbered_headings=0.5,
        bold_names=0.95,
        sub_bullet_rate=0.25,
        citation_rate=0.45,
        citation_marker="bracket",
        reference_block_rate=0.9,
        think_rate=0.0,
        refusal_rate=0.05,
        empty_rate=0.02,
        error_rate=0.025,
        irrelevant_rate=0.025,
        against_rate=0.08,
        trap_rate=0.30,
        emoji_rate=0.0,
        mixed_alias_rate=0.10,
        verbosity=1.0,
        home_keywords=("百度", "baidu", "文心", "如流", "智能云"),
    ),
    "hunyuan": dict(
        structure_weights=_sw(0.20, 0.30, 0.07, 0.10, 0.25, 0.08),
        heading_prefix="####",
        numbered_headings=0.4,
        bold_names=0.85,
        sub_bullet_rate=0.30,
        citation_rate=0.30,
        citation_marker="footnote",
        reference_block_rate=0.75,
        think_rate=0.0,
        refusal_rate=0.04,
        empty_rate=0.025,
        error_rate=0.02,
        irrelevant_rate=0.02,
        against_rate=0.10,
        trap_rate=0.30,
        emoji_rate=0.10,
        mixed_alias_rate=0.12,
        verbosity=0.95,
        home_keywords=("腾讯", "tencent", "企业微信", "微信", "wechat", "qq", "wecom", "混元"),
    ),
    "doubao": dict(
        structure_weights=_sw(0.15, 0.20, 0.40, 0.07, 0.10, 0.08),
        heading_prefix="###",
        numbered_headings=0.5,
        bold_names=0.9,
        sub_bullet_rate=0.20,
        citation_rate=0.25,
        citation_marker="bracket",
        reference_block_rate=0.7,
        think_rate=0.0,
        refusal_rate=0.03,
        empty_rate=0.02,
        error_rate=0.02,
        irrelevant_rate=0.025,
        against_rate=0.10,
        trap_rate=0.30,
        emoji_rate=0.55,
        mixed_alias_rate=0.10,
        verbosity=0.8,
        home_keywords=("字节", "bytedance", "飞书", "feishu", "lark", "火山", "volcengine", "volcano", "抖音", "douyin", "豆包"),
    ),
    "kimi": dict(
        structure_weights=_sw(0.20, 0.20, 0.10, 0.15, 0.10, 0.25),
        heading_prefix="###",
        numbered_headings=0.6,
        bold_names=0.8,
        sub_bullet_rate=0.30,
        citation_rate=0.70,
        citation_marker="caret",
        reference_block_rate=0.8,
        think_rate=0.0,
        refusal_rate=0.03,
        empty_rate=0.02,
        error_rate=0.025,
        irrelevant_rate=0.02,
        against_rate=0.12,
        trap_rate=0.30,
        emoji_rate=0.0,
        mixed_alias_rate=0.14,
        verbosity=1.3,
        home_keywords=("月之暗面", "moonshot", "kimi"),
    ),
}

_PLATFORM_ALIASES = {
    "moonshot": "kimi",
    "wenxin": "ernie",
    "yiyan": "ernie",
    "文心一言": "ernie",
    "tongyi": "qwen",
    "通义千问": "qwen",
    "豆包": "doubao",
    "腾讯混元": "hunyuan",
    "混元": "hunyuan",
}


def _canonical_known(key: str) -> str | None:
    if key in _KNOWN_STYLE_ARGS:
        return key
    if key in _PLATFORM_ALIASES:
        return _PLATFORM_ALIASES[key]
    for known in KNOWN_PLATFORMS:  # "deepseek-chat", "qwen-max", "ernie_4.0" ...
        if key.startswith(known) and len(key) > len(known) and key[len(known)] in "-_:/ .":
            return known
    return None


@lru_cache(maxsize=512)
def style_for(platform: str) -> PlatformStyle:
    """The writing style of a platform: hand-made for the known ones, hash-derived otherwise."""
    key = _pkey(platform)
    known = _canonical_known(key)
    if known is not None:
        return PlatformStyle(platform=platform, **_KNOWN_STYLE_ARGS[known])
    d = _digest("style", key)

    def u(i: int) -> float:
        return d[i] / 255.0

    weights = tuple((s, round(0.15 + u(i) ** 2 * 1.0, 4)) for i, s in enumerate(STRUCTURES))
    return PlatformStyle(
        platform=platform,
        structure_weights=weights,
        heading_prefix="###" if d[6] < 170 else "####",
        numbered_headings=round(0.3 + 0.5 * u(7), 3),
        bold_names=round(0.6 + 0.38 * u(8), 3),
        sub_bullet_rate=round(0.15 + 0.35 * u(9), 3),
        citation_rate=round(0.15 + 0.55 * u(10), 3),
        citation_marker=_MARKER_KINDS[d[11] % len(_MARKER_KINDS)],
        reference_block_rate=round(0.5 + 0.45 * u(12), 3),
        think_rate=0.0 if d[13] < 160 else round(0.08 + 0.3 * u(14), 3),
        refusal_rate=round(0.03 + 0.02 * u(15), 4),
        empty_rate=round(0.015 + 0.015 * u(16), 4),
        error_rate=round(0.015 + 0.015 * u(17), 4),
        irrelevant_rate=round(0.015 + 0.015 * u(18), 4),
        against_rate=round(0.08 + 0.04 * u(19), 3),
        trap_rate=round(0.2 + 0.2 * u(20), 3),
        emoji_rate=0.0 if d[21] < 180 else round(0.1 + 0.4 * u(22), 3),
        mixed_alias_rate=round(0.06 + 0.14 * u(23), 3),
        verbosity=round(0.75 + 0.6 * u(24), 3),
        home_keywords=(),
    )


# --------------------------------------------------------------------------- brand weights


def _day_ordinal(day: str) -> int:
    try:
        return date.fromisoformat(day.strip()[:10]).toordinal()
    except ValueError:
        return 738000 + int.from_bytes(_digest("day", day)[:4], "big") % 3650


def _has_cjk(text: str) -> bool:
    for ch in text:
        o = ord(ch)
        if (
            0x4E00 <= o <= 0x9FFF
            or 0x3400 <= o <= 0x4DBF
            or 0x3040 <= o <= 0x30FF
            or 0xAC00 <= o <= 0xD7AF
            or 0xF900 <= o <= 0xFAFF
            or 0x20000 <= o <= 0x2FFFF
        ):
            return True
    return False


@lru_cache(maxsize=4096)
def _weights(key: str, brands: tuple[SimBrand, ...], day: str | None) -> tuple[float, ...]:
    if not brands:
        return ()
    style = style_for(key)
    home = style.home_keywords
    out = []
    for b in brands:
        base = 0.12 + 0.88 * _unit("base", key, b.name) ** 1.3
        if home:
            texts = (b.name.lower(),) + tuple(a.lower() for a in b.aliases) + tuple(x.lower() for x in b.domains)
            if any(h in t for h in home for t in texts):
                base *= 1.9
        out.append(base)
    if day is not None:
        o = _day_ordinal(day)
        for i, b in enumerate(brands):
            amp = 0.12 + 0.25 * _unit("amp", key, b.name)
            period = 17.0 + 60.0 * _unit("period", key, b.name)
            phase = 2 * math.pi * _unit("phase", key, b.name)
            out[i] *= 1.0 + amp * math.sin(2 * math.pi * o / period + phase)
        # one brand per platform gets a visible step change on some days
        names = sorted(b.name for b in brands)
        hd = _digest("step", key)
        step_name = names[int.from_bytes(hd[:4], "big") % len(names)]
        span = 3 + hd[4] % 5  # 3-7 days per block
        cycle = 3 + hd[5] % 3  # one block in 3-5 is "stepped"
        offset = int.from_bytes(hd[6:8], "big") % (span * cycle)
        factor = 0.2 if hd[8] % 2 == 0 else 2.6
        if ((o + offset) // span) % cycle == 0:
            for i, b in enumerate(brands):
                if b.name == step_name:
                    out[i] *= factor
    return tuple(round(max(w, 0.01), 6) for w in out)


def brand_weights(platform: str, brands: Sequence[SimBrand], day: str | None = None) -> dict[str, float]:
    """Relative propensity (positive, not normalised) of ``platform`` to name each brand.

    Deterministic per platform name (case-insensitive); each platform favours different
    brands (and a little its own ecosystem).  With ``day`` ("YYYY-MM-DD") the weights
    drift slowly (a sine over the day ordinal) and one brand per platform, chosen by
    hash, gets a step change (x0.2 or x2.6) during some blocks of days.
    """
    bt = tuple(brands)
    ws = _weights(_pkey(platform), bt, day)
    return {b.name: w for b, w in zip(bt, ws)}


# --------------------------------------------------------------------------- phrase tables

_FULLWIDTH = str.maketrans({chr(c): chr(c + 0xFEE0) for c in range(0x21, 0x7F)})

# (keywords, zh topic, en topic, en plural, slug, consumer product?)
_CATEGORIES: tuple[tuple[tuple[str, ...], str, str, str, str, bool], ...] = (
    (("数据库", "database", "postgres", "mysql"), "数据库", "database", "databases", "database", False),
    (("cdn", "内容分发"), "CDN 服务", "CDN", "CDNs", "cdn", False),
    (("云服务", "云计算", "云厂商", "云平台", "云主机", "服务器", "cloud", "hosting", "server"),
     "云服务", "cloud platform", "cloud platforms", "cloud-platforms", False),
    (("crm", "客户管理", "客户关系", "销售管理"), "CRM 系统", "CRM", "CRMs", "crm", False),
    (("项目管理", "任务管理", "project management", "task management"),
     "项目管理工具", "project management tool", "project management tools", "project-management", False),
    (("协作", "协同", "办公", "即时通讯", "会议", "collaboration", "productivity", "team chat", "messaging", "meeting"),
     "协同办公工具", "collaboration tool", "collaboration tools", "collaboration", False),
    (("大模型", "ai助手", "ai 助手", "人工智能", "llm", "ai assistant", "chatbot", "language model"),
     "AI 大模型", "AI assistant", "AI assistants", "ai-assistants", False),
    (("支付", "收款", "payment"), "支付服务", "payment provider", "payment providers", "payments", False),
    (("电商", "网购", "购物", "e-commerce", "ecommerce", "online shopping"),
     "电商平台", "e-commerce platform", "e-commerce platforms", "ecommerce", False),
    (("安全", "防火墙", "杀毒", "security", "firewall", "antivirus"),
     "安全产品", "security product", "security products", "security", False),
    (("手机", "smartphone", "phone"), "手机", "smartphone", "smartphones", "smartphones", True),
    (("汽车", "电动车", "新能源车", "electric car", "electric vehicle", " ev", " car", "vehicle"),
     "新能源汽车", "electric car", "electric cars", "electric-cars", True),
    (("耳机", "headphone", "earbud"), "耳机", "pair of headphones", "headphones", "headphones", True),
    (("笔记本", "电脑", "laptop", "notebook"), "笔记本电脑", "laptop", "laptops", "laptops", True),
)
_DEFAULT_CATEGORY = ((), "相关产品", "solution", "solutions", "saas", False)

_ZH_SOFT = dict(
    pros=(
        "产品线完整，生态成熟",
        "价格透明，性价比高",
        "文档完善，社区活跃",
        "本地化服务好，技术支持响应快",
        "大型企业落地案例多",
        "集成能力强，开放接口丰富",
        "上手简单，学习成本低",
        "安全合规认证齐全",
        "稳定性经过大规模业务验证",
        "免费额度友好",
        "功能迭代快，AI 能力集成较早",
        "国内访问速度快，节点覆盖广",
        "海外覆盖广，适合出海",
        "支持私有化部署，可定制程度高",
        "界面简洁，交互体验好",
        "权限管理细致，适合多部门协作",
    ),
    cons=(
        "价格偏高",
        "高级功能需要额外付费",
        "配置项较多，新手需要一定学习时间",
        "部分功能的文档更新不及时",
        "海外节点相对较少",
        "售后响应速度因套餐而异",
        "生态相对封闭",
        "中文资料偏少",
        "迁移成本不低",
        "免费版限制较多",
    ),
    uses=(
        "中小团队",
        "大型企业",
        "初创公司",
        "出海业务",
        "对成本敏感的项目",
        "已有相关生态的团队",
        "需要私有化部署的政企客户",
        "个人开发者",
        "快速验证 MVP",
        "高并发业务场景",
        "跨地域协作的团队",
    ),
)
_ZH_CONS = dict(
    pros=(
        "性价比高",
        "做工扎实，质感好",
        "续航表现出色",
        "售后网点多，服务有保障",
        "系统流畅，广告少",
        "配置均衡，没有明显短板",
        "口碑稳定，保值率高",
        "设计时尚，颜值在线",
        "智能化功能丰富",
        "品控稳定，返修率低",
    ),
    cons=(
        "价格偏高",
        "部分型号发热明显",
        "售后体验参差不齐",
        "配件较贵",
        "新品溢价明显",
        "线下渠道较少",
    ),
    uses=(
        "学生党",
        "商务人士",
        "家庭用户",
        "预算有限的用户",
        "追求性能的用户",
        "长辈使用",
        "通勤族",
    ),
)
_EN_SOFT = dict(
    pros=(
        "a mature ecosystem",
        "a broad product line",
        "transparent, competitive pricing",
        "excellent documentation",
        "an active community",
        "responsive local support",
        "a long enterprise track record",
        "rich integrations",
        "a gentle learning curve",
        "comprehensive compliance certifications",
        "proven stability at scale",
        "a generous free tier",
        "fast-moving AI features",
        "wide global coverage",
        "flexible deployment options",
        "a clean, intuitive interface",
        "fine-grained permission controls",
    ),
    cons=(
        "pricing on the high side",
        "advanced features locked behind higher tiers",
        "a steep configuration curve for newcomers",
        "documentation that sometimes lags behind releases",
        "fewer regions in some markets",
        "support quality that varies by plan",
        "a fairly closed ecosystem",
        "non-trivial migration costs",
        "a limited free plan",
    ),
    uses=(
        "small teams",
        "large enterprises",
        "early-stage startups",
        "global businesses",
        "cost-sensitive projects",
        "teams already invested in its ecosystem",
        "regulated industries",
        "solo developers",
        "quick MVPs",
        "high-traffic workloads",
        "distributed teams",
    ),
)
_EN_CONS = dict(
    pros=(
        "excellent value for money",
        "solid build quality",
        "outstanding battery life",
        "a wide service network",
        "smooth, ad-free software",
        "well-balanced specs",
        "strong resale value",
        "a stylish design",
        "plenty of smart features",
        "consistent quality control",
    ),
    cons=(
        "a premium price",
        "some models running warm",
        "uneven after-sales service",
        "pricey accessories",
        "limited retail presence",
    ),
    uses=(
        "students",
        "business travellers",
        "families",
        "budget buyers",
        "power users",
        "older users",
        "daily commuters",
    ),
)
_POOLS = {("zh", False): _ZH_SOFT, ("zh", True): _ZH_CONS, ("en", False): _EN_SOFT, ("en", True): _EN_CONS}

# Untracked options: made-up products, and generic labels that only work as list items.
_FILLER_PRODUCTS = {
    "zh": ("星衡云", "数衍科技", "青禾科技", "云帆智联", "Orbitly", "Quillstack"),
    "en": ("Orbitly", "Quillstack", "Lumenary", "Vantora", "NimbusGrid"),
}
_FILLER_GENERIC = {
    "zh": ("其他厂商", "自建方案（self-hosted）", "开源自部署方案", "本地服务商", "行业垂直解决方案", "外包定制开发"),
    "en": ("Other vendors", "Self-hosted (open source)", "Regional providers", "In-house build",
           "Niche vertical tools", "自建方案 (self-hosted)"),
}
_FILLERS = {lang: _FILLER_PRODUCTS[lang] + _FILLER_GENERIC[lang] for lang in ("zh", "en")}
_GENERIC = frozenset(_FILLER_GENERIC["zh"] + _FILLER_GENERIC["en"])

_ZH = dict(
    intro=(
        "这是一个很常见的选型问题。结合目前的市场情况和用户反馈，下面几个选项比较值得关注：",
        "根据公开资料和实际使用口碑，我整理了几个主流选择：",
        "选择时主要看预算、团队规模和已有技术栈。以下是几个常见方案：",
        "好的，针对“{q}”这个问题，可以从以下几个方面来看：",
        "市面上可选的产品不少，各有侧重。简单对比如下：",
        "下面按综合表现排序，供你参考：",
        "没有绝对最好的方案，只有最适合的。以下几款比较有代表性：",
        "关于{topic}，目前国内外主流的选择大致如下：",
    ),
    intro_table=(
        "下面用一张表格做个对比：",
        "为了方便比较，我把几个主流{topic}整理成了表格：",
        "简单对比如下表：",
    ),
    intro_prose=(
        "这个问题要看具体需求。",
        "选{topic}时，预算和使用场景是最重要的两个因素。",
        "好的，我来简单分析一下。",
    ),
    list_sentence=(
        "目前比较主流的有{list}。",
        "常见的选择包括{list}等。",
        "大家讨论得比较多的是{list}。",
    ),
    desc=(
        "{p1}，{p2}。在{u}中口碑不错，不过{c}。",
        "作为老牌厂商，{p1}，{p2}。比较适合{u}。",
        "{p1}。从用户反馈来看，{p2}，但{c}。",
        "优势在于{p1}，同时{p2}；不足之处是{c}，更适合{u}。",
        "整体表现均衡，{p1}。需要注意的是{c}，建议先用免费版试一试。",
        "近两年增长很快，{p1}，在{u}中使用较多。",
        "{p1}，{p2}，比较适合{u}。",
    ),
    desc_extra=("此外，{p2}。", "对{u}来说上手很快，基本不需要额外培训。", "如果你是{u}，可以重点关注。",
                "很多用户反馈{p2}。"),
    desc_extra_con=("缺点是{c}，选购前最好确认清楚。", "不足之处在于{c}。"),
    intro_more=(
        "下面从功能、价格、服务和生态几个维度简单分析一下，供参考。",
        "需要说明的是，以下排名不分先后，具体还要结合实际需求。",
        "我结合近期的公开评测和用户口碑做了整理。",
        "不同规模的团队关注点差别很大，所以我按适用场景分别说明。",
    ),
    prose_first=(
        "{n}的优势是{p1}，适合{u}。",
        "{n}在{u}中用得比较多，{p1}。",
        "先说{n}，{p1}，{p2}，但{c}。",
        "如果是{u}，{n}是一个稳妥的选择，{p1}。",
    ),
    prose_item=(
        "{n}的优势是{p1}，适合{u}。",
        "{n}在{u}中用得比较多，{p1}。",
        "相比之下，{n}{p1}，但{c}。",
        "{n}则{p1}，缺点是{c}。",
        "如果是{u}，{n}也值得考虑，{p1}。",
    ),
    sub=("优点：{p1}", "缺点：{c}", "适合：{u}", "价格：按量计费，另有包年包月套餐", "推荐指数：★★★★☆"),
    sub_passing=("可与{o}对比", "和{o}相比，{p1}", "与{o}定位相近", "不少用户从{o}迁移过来"),
    sep=("：", "：", " - ", " —— "),
    table_head=(
        ("| 方案 | 优势 | 适合场景 |", "| --- | --- | --- |", ("p", "u")),
        ("| 产品 | 特点 | 价格 | 推荐指数 |", "| :--- | :--- | :---: | :---: |", ("p", "price", "star")),
        ("| 名称 | 优点 | 缺点 |", "|------|------|------|", ("p", "c")),
        ("| 选项 | 核心优势 | 不足 | 适合人群 |", "| --- | --- | --- | --- |", ("p", "c", "u")),
    ),
    price=("按量付费", "免费版 + 付费版", "较高", "中等", "偏低", "¥99/月起", "需询价"),
    star=("⭐⭐⭐⭐⭐", "⭐⭐⭐⭐", "★★★★☆", "★★★☆☆", "4.5/5", "4/5"),
    table_after=(
        "从表格可以看出，{a}在{p1}方面更有优势，而{b}更适合{u}。",
        "简单来说，{a}胜在{p1}，{b}则胜在{p2}。",
        "如果是{u}，可以优先看{a}；{b}的{p1}也很有吸引力。",
    ),
    table_after1=("表格里的信息基于公开资料整理，实际体验可能因版本而异。", "建议结合自身预算和团队规模，对照上表逐项打分。"),
    summary_prefix=("总结：", "**总结**：", "综上，", "**建议**：", "总的来说，", "### 总结\n\n"),
    summary0=(
        "没有绝对的最优解，关键要看业务场景和预算。",
        "建议先明确需求，再申请试用做对比。",
        "不同方案各有侧重，可以先小范围试点再决定。",
    ),
    summary1=(
        "综合来看，{a}是比较稳妥的选择。",
        "如果没有特殊需求，直接选{a}即可。",
        "对大多数用户来说，{a}足够用了。",
    ),
    summary2=(
        "如果预算有限，推荐{a}；如果更看重稳定性和生态，{b}更合适。",
        "{a}综合实力最强，{b}性价比更高，可以根据实际需求选择。",
        "建议先申请{a}和{b}的免费试用，实际跑一下再做决定。",
        "追求省心选{a}，追求灵活选{b}。",
        "首选{a}，{b}可以作为备选。",
    ),
    against=(
        "不推荐{n}，因为它在{c_topic}方面表现一般。",
        "不建议选择{n}，除非你已经深度使用它的生态。",
        "{n}就不太推荐了，{c}，而且近期口碑有所下滑。",
        "如果预算有限，不建议考虑{n}。",
        "需要提醒的是，{n}{c}，不推荐作为首选。",
    ),
    against_inline=("但整体不推荐，{c}。", "不过不建议作为首选，{c}。"),
    against_lead=("另外，", "需要注意：", "", "⚠️ "),
    c_topic=("性价比", "稳定性", "售后服务", "功能完整度", "本地化支持"),
    closing=(
        "如果你能告诉我具体的预算和使用场景，我可以给出更有针对性的建议。",
        "希望对你有帮助！如有其他问题欢迎继续提问。",
        "以上信息仅供参考，具体以官方最新公布为准。",
    ),
    heading=("## {topic}选型建议", "## 主流{topic}推荐", "## 推荐方案"),
    think=(
        "用户在问“{q}”。这是一个选型类问题，我应该先列出主流选项，比如{a}，再分别说明优缺点。{extra}最后给出一个简洁的建议。",
        "好的，我需要回答关于{topic}的推荐。先想想有哪些常见的：{a}……每个的特点不太一样。{extra}用户没有说明预算，所以我应该给出不同场景下的建议。",
        "嗯，这个问题需要比较几个{topic}。{a}应该都要提到。{extra}然后按适用场景整理一下，注意不要写得太长。",
    ),
    think_extra=("{o}也可以提一下，不过它{c}，放在后面。", "{o}最近也有不少讨论，但信息不太确定，先不展开。", ""),
    ref_heading=("参考资料：", "**参考资料**", "参考来源：", "引用：", "### 参考资料"),
    own_label=(("{n}官网", ""), ("{n}官方文档", "docs/getting-started"), ("{n} 产品介绍", "product/overview"),
               ("{n} 定价页", "pricing"), ("{n}客户案例", "customers")),
    own_label_generic=(("官方文档", "docs/getting-started"), ("产品定价页", "pricing"), ("帮助中心", "help"),
                       ("产品介绍页", "product"), ("企业解决方案", "solutions/enterprise")),
    url_own=("（详情可参考官网：{url}）", "可以在[官网]({url})查看最新价格。", "具体配置见 {url} 。", "参考：[官方文档]({url})。"),
    url_compare=("更多横向对比可以参考 {url} 。", "第三方评测可参考：{url}"),
    join_and="和",
    comma="、",
)
_EN = dict(
    intro=(
        "Great question — there's no single best choice, but a few options stand out:",
        "Here are the options most teams shortlist, based on features, pricing and reputation:",
        "It depends on your budget, team size and existing stack. The main contenders are:",
        "Short answer: it depends. Here's a quick comparison of the usual suspects:",
        "Based on current reviews and user feedback, these are worth a look:",
        'Sure! Here is an overview of the leading options for "{q}":',
        "When it comes to {topic_pl}, these are the names that come up most often:",
    ),
    intro_table=(
        "Here's a side-by-side comparison:",
        "The table below compares the most common {topic_pl}:",
        "A quick overview:",
    ),
    intro_prose=(
        "It really depends on what you need.",
        "Budget and use case matter most when picking a {topic}.",
        "Happy to help with this one.",
    ),
    list_sentence=(
        "The usual shortlist includes {list}.",
        "Most people end up comparing {list}.",
        "The main options are {list}.",
    ),
    desc=(
        "Known for {p1} and {p2}. A good fit for {u}.",
        "Offers {p1}; the main drawback is {c}.",
        "Stands out for {p1}, but watch out for {c}.",
        "Popular with {u} thanks to {p1}.",
        "A solid all-rounder with {p1} and {p2}.",
        "A strong pick if you value {p1}. Downside: {c}.",
    ),
    desc_extra=("It also brings {p2}.", "Ideal for {u}.", "Works well for {u}."),
    desc_extra_con=("The catch: {c}.", "Keep in mind {c}."),
    intro_more=(
        "Rankings are not strict; the right pick depends on your requirements.",
        "I've summarized recent reviews and user feedback below.",
        "Different team sizes care about very different things, so I've noted the best fit for each.",
    ),
    prose_first=(
        "{n} is known for {p1}, which makes it a good fit for {u}.",
        "Let's start with {n}: it offers {p1} and {p2}, though {c} is worth noting.",
        "For {u}, {n} is a safe choice thanks to {p1}.",
    ),
    prose_item=(
        "{n} is known for {p1}, which makes it a good fit for {u}.",
        "{n} offers {p1}, though you should watch out for {c}.",
        "By contrast, {n} shines with {p1}.",
        "For {u}, {n} is worth a look thanks to {p1}.",
        "{n} brings {p1}, but {c} can be a dealbreaker.",
    ),
    sub=("Pros: {p1}", "Cons: {c}", "Best for: {u}", "Pricing: pay-as-you-go, with annual plans", "Rating: 4.5/5"),
    sub_passing=("Often compared with {o}", "Compared to {o}, it offers {p1}", "Positioned similarly to {o}",
                 "Many users migrate here from {o}"),
    sep=(" — ", ": ", " – ", " - "),
    table_head=(
        ("| Option | Strengths | Best for |", "| --- | --- | --- |", ("p", "u")),
        ("| Product | Highlights | Pricing | Rating |", "| :--- | :--- | :---: | :---: |", ("p", "price", "star")),
        ("| Name | Pros | Cons |", "|------|------|------|", ("p", "c")),
        ("| Option | Key strength | Weakness | Ideal for |", "| --- | --- | --- | --- |", ("p", "c", "u")),
    ),
    price=("Pay-as-you-go", "Free + paid tiers", "$$$", "$$", "$", "From $15/user/mo", "Contact sales"),
    star=("⭐⭐⭐⭐⭐", "⭐⭐⭐⭐", "★★★★☆", "★★★☆☆", "4.5/5", "4/5"),
    table_after=(
        "As the table shows, {a} leads on {p1}, while {b} suits {u} better.",
        "In a nutshell, {a} wins on {p1} and {b} on {p2}.",
        "For {u}, look at {a} first; {b} is also attractive thanks to {p1}.",
    ),
    table_after1=("The table is based on public information; your experience may vary by plan and version.",
                  "Score each option against your own budget and team size using the table above."),
    summary_prefix=("**Bottom line:** ", "In short, ", "**Recommendation:** ", "TL;DR: ", "### Summary\n\n", "Overall, "),
    summary0=(
        "there's no one-size-fits-all answer — it depends on your use case.",
        "define your requirements first, then trial two or three options.",
        "each option has trade-offs, so pilot one before committing.",
    ),
    summary1=(
        "{a} is the safe default for most people.",
        "unless you have special requirements, {a} will do the job.",
        "{a} covers what most teams need.",
    ),
    summary2=(
        "if budget is tight, go with {a}; if you need enterprise-grade support, {b} is the safer bet.",
        "{a} is the default choice for most teams, while {b} shines for specific needs.",
        "start with free trials of {a} and {b} and benchmark with your own workload.",
        "{a} for simplicity, {b} for flexibility.",
        "pick {a} first and keep {b} as a fallback.",
    ),
    against=(
        "I would avoid {n} for this use case, since it falls short on {c_topic}.",
        "Skip {n} unless you are already invested in its ecosystem.",
        "I wouldn't recommend {n} here: {c}.",
        "{n} is best avoided if budget matters.",
        "One to steer clear of is {n}, mainly because of {c}.",
    ),
    against_inline=("That said, I would avoid it as a first choice because of {c}.",
                    "Honestly, I wouldn't recommend it given {c}."),
    against_lead=("Also, ", "A word of caution: ", "", "⚠️ "),
    c_topic=("value for money", "reliability", "customer support", "feature depth", "local support"),
    closing=(
        "If you share more about your budget and use case, I can narrow this down further.",
        "Hope this helps! Let me know if you have other questions.",
        "Note: pricing and features change often, so double-check the vendors' sites.",
    ),
    heading=("## Best {topic_pl}", "## Top picks", "## Recommended options"),
    think=(
        'The user is asking: "{q}". I should list the main options — probably {a} — and compare them. {extra}Then wrap up with a short recommendation.',
        "Okay, I need to recommend a {topic}. Common choices: {a}... each has different strengths. {extra}The user didn't mention budget, so I'll cover a few scenarios.",
        "Hmm, this calls for comparing several {topic_pl}. I should mention {a}. {extra}Keep it concise and organized by use case.",
    ),
    think_extra=("{o} could be mentioned too, but it has {c}, so it goes last. ",
                 "There's been buzz about {o}, but I'm not sure of the details, so I'll leave it out. ", ""),
    ref_heading=("Sources:", "References:", "**Sources**", "### References"),
    own_label=(("{n} official website", ""), ("{n} Docs", "docs/getting-started"), ("{n} pricing", "pricing"),
               ("{n} product overview", "product/overview"), ("{n} customer stories", "customers")),
    own_label_generic=(("Official documentation", "docs/getting-started"), ("Pricing page", "pricing"),
                       ("Product overview", "product"), ("Help center", "help"), ("Enterprise solutions", "solutions/enterprise")),
    url_own=("(details: {url})", "See the [official docs]({url}).", "(pricing: {url})", "More at [the official site]({url})."),
    url_compare=("For a side-by-side comparison, see {url}.", "Third-party reviews: {url}"),
    join_and=" and ",
    comma=", ",
)
_PH = {"zh": _ZH, "en": _EN}

# Trap phrases: text a naive substring matcher mistakes for a brand mention.
_TRAPS_GENERAL = {
    "zh": (
        "就像苹果和橘子不能直接比较，这几个方案的侧重点也不一样。",
        "选型这件事并不是板上钉钉的，建议多做测试。",
        "网上的说法都有道理，但还是要结合实际场景。",
        "这就好比小米粥和白米粥，各有各的口味，没有绝对的好坏。",
        "再完美团队流程也离不开合适的工具。",
        "建议做一次 360 度的评估，再做决定。",
        "工具之间打通后能实现一加一大于二的效果。",
        "日常使用中点点滴滴的体验差异会被放大。",
    ),
    "en": (
        "Comparing them is a bit like comparing apples and oranges.",
        "Don't buy into the notion that the priciest option is always the best.",
        "Every option has its flaws, so weigh them against your priorities.",
        "It's worth zooming in on the pricing details before committing.",
        "If your team is already stretched, there's not much slack for a steep learning curve.",
        "No vendor is an oracle here — test with your own workloads.",
        "Start the pilot on a Monday and review the results by Friday.",
        "Most teams start small and scale up later.",
    ),
}
_TRAPS_ITEM = {
    "zh": (
        "对预算有限的团队来说，这是一个理想的选择。",
        "功能中规中矩，唯一加分项是文档比较完善。",
        "部署流程像做快手菜一样简单。",
        "导出的元数据（metadata）也比较完整。",
    ),
    "en": (
        "For budget-conscious teams it is close to ideal.",
        "Make sure the metadata and audit logs can be exported.",
        "Ticking every compliance box is easy here.",
        "The only flaws are minor UI quirks.",
    ),
}

_REFUSALS = {
    "zh": (
        "抱歉，我无法回答这个问题。",
        "暂时无法提供相关信息。",
        "抱歉，这个问题我还没有学会，换个问题试试吧。",
        "你好，我无法给到相关内容。",
        "抱歉，我目前无法提供具体的产品推荐，建议您参考官方资料或咨询专业人士。",
        "这个问题涉及商业推荐，我不便作出评价。",
    ),
    "en": (
        "I'm sorry, but I can't help with that request.",
        "I'm not able to provide product recommendations.",
        "Sorry, I can't assist with that.",
        "I'm unable to answer this question right now.",
        "I'm sorry, but I can't provide specific vendor recommendations. Please consult official sources.",
    ),
}
_EMPTIES = ("", " ", "\n", "  \n\t", "\n\n")
_ERRORS = (
    "服务器繁忙，请稍后再试。",
    "Error: rate limit exceeded, please retry later",
    "系统错误（code 500）",
    "请求超时，请稍后重试。",
    '{"error":{"message":"The server had an error while processing your request. Sorry about that!","type":"server_error","code":500}}',
    "Internal Server Error",
    "当前使用人数较多，请稍后再试。",
    "Error: context deadline exceeded",
    "网络异常，请检查网络连接后重试。",
    "502 Bad Gateway",
)
_IRRELEVANT = {
    "zh": (
        "今天北京天气晴，最高气温 22℃，最低 11℃，空气质量良好，适合户外活动。早晚温差较大，出门记得带件薄外套。",
        "小米粥的做法：\n\n1. 小米 100 克淘洗干净，浸泡 20 分钟；\n2. 锅中加水烧开后放入小米；\n3. 转小火熬煮 30 分钟，期间不时搅拌防止粘锅；\n4. 可根据口味加入红枣或南瓜。\n\n小米粥养胃，适合早餐食用。",
        "苹果派的做法：准备苹果 3 个、黄油 50 克、面粉 200 克、白糖 40 克。先把苹果切丁，加糖和黄油炒软；再擀好派皮，铺入馅料，烤箱 180℃ 烤 35 分钟即可。",
        "床前明月光，疑是地上霜。举头望明月，低头思故乡。这首《静夜思》是李白的代表作之一，表达了游子的思乡之情。",
        "您好！有什么可以帮您的吗？我可以回答问题、写作、翻译、编程等。",
        "番茄炒蛋的做法：鸡蛋 3 个打散炒熟盛出，番茄切块炒出汁，加入鸡蛋翻炒，放少许盐和糖即可出锅。",
    ),
    "en": (
        "The weather today is mostly sunny with a high of 72°F and a low of 55°F. Expect a light breeze in the afternoon — a great day for a walk.",
        "Here's a simple apple pie recipe: mix 6 sliced apples with sugar, cinnamon and a squeeze of lemon, pour into a pie crust, cover with a second crust and bake at 375°F for about 50 minutes.",
        "Here's how to make a comforting bowl of millet porridge (小米粥): rinse 1 cup of millet, simmer it in 6 cups of water for 30 minutes, stirring occasionally, and sweeten with dates or pumpkin.",
        "Hello! How can I help you today? I can answer questions, help with writing, translate text and more.",
        "Fun fact: octopuses have three hearts and blue blood. Two hearts pump blood to the gills, while the third pumps it to the rest of the body.",
    ),
}

_EMOJIS = ("✅", "👉", "💡", "📌", "🔹", "⭐", "🚀")

# third-party sites: (domain, language, label templates zh, label templates en, url kind)
_SITES_ZH = (
    ("zhihu.com", ("知乎：{topic}怎么选？", "知乎：{a}和{b}哪个好？", "知乎专栏：{year}年{topic}横评"), "zhihu"),
    ("36kr.com", ("36氪：{year}年{topic}市场观察", "36氪：{a}的新动作"), "36kr"),
    ("csdn.net", ("CSDN：主流{topic}对比测评", "CSDN 博客：{a} 使用体验"), "csdn"),
    ("sspai.com", ("少数派：我的{topic}选择", "少数派：{topic}入门指南"), "sspai"),
    ("infoq.cn", ("InfoQ：{topic}选型实践",), "infoq"),
    ("huxiu.com", ("虎嗅：{topic}赛道格局变化",), "huxiu"),
    ("juejin.cn", ("掘金：{topic}踩坑记录", "掘金：从{a}迁移到{b}的经验"), "juejin"),
)
_SITES_EN = (
    ("g2.com", ("G2: {a} vs {b}", "G2: Best {topic} software", "G2 comparison"), "g2"),
    ("techradar.com", ("TechRadar: The best {topic_pl} in {year}",), "techradar"),
    ("gartner.com", ("Gartner Peer Insights: {topic} reviews",), "gartner"),
    ("capterra.com", ("Capterra: {topic} comparison",), "capterra"),
    ("reddit.com", ("Reddit discussion: {a} or {b}?", "Reddit: what {topic} do you use?"), "reddit"),
    ("pcmag.com", ("PCMag: The best {topic_pl} for {year}",), "pcmag"),
)
_OWN_PATHS = ("", "pricing", "product", "docs/getting-started", "solutions/enterprise", "customers",
              "product/overview", "blog/product-update")
_ALNUM = "abcdefghijklmnopqrstuvwxyz0123456789"
_K_CHOICES = (2, 2, 3, 3, 3, 3, 4, 4, 4, 5, 5, 6)


# --------------------------------------------------------------------------- per-input caches


@lru_cache(maxsize=8192)
def _analyze(question: str) -> tuple[str, tuple, str]:
    lang = "zh" if _has_cjk(question) else "en"
    low = " " + question.lower()
    cat = _DEFAULT_CATEGORY
    for c in _CATEGORIES:
        if any(k in low for k in c[0]):
            cat = c
            break
    q = question.strip().rstrip("?？!！。.")
    limit = 40 if lang == "zh" else 70
    if len(q) > limit:
        q = q[:limit] + "…"
    q = q.replace("{", "(").replace("}", ")")
    return lang, cat, q


class _BInfo:
    __slots__ = ("name", "zh", "en", "domains", "hosts", "slug", "lowers")

    def __init__(self, b: SimBrand) -> None:
        self.name = b.name
        zh: list[str] = []
        en: list[str] = []
        for a in (b.name,) + tuple(b.aliases):
            a = a.strip()
            if not a:
                continue
            tgt = zh if _has_cjk(a) else en
            if a not in tgt:
                tgt.append(a)
        if not zh and not en:
            en.append(b.name or "?")
        self.zh = tuple(zh)
        self.en = tuple(en)
        self.domains = tuple(d.strip().lower() for d in b.domains if d.strip())
        self.hosts = tuple(d if d.count(".") >= 2 or d.startswith("www.") else "www." + d for d in self.domains)
        base = self.en[0] if self.en else (self.domains[0].split(".")[0] if self.domains else "brand")
        self.slug = "".join(ch if ch.isalnum() else "-" for ch in base.lower()).strip("-") or "brand"
        self.lowers = tuple(dict.fromkeys(x.lower() for x in (b.name,) + tuple(b.aliases) if len(x.strip()) >= 2))


@lru_cache(maxsize=1024)
def _infos(brands: tuple[SimBrand, ...]) -> tuple[_BInfo, ...]:
    return tuple(_BInfo(b) for b in brands)


@lru_cache(maxsize=1024)
def _fillers(brands: tuple[SimBrand, ...], lang: str) -> tuple[str, ...]:
    infos = _infos(brands)
    lows = [x for bi in infos for x in bi.lowers]
    pool = tuple(f for f in _FILLERS[lang] if not any(x in f.lower() for x in lows))
    if not any(f not in _GENERIC for f in pool):
        pool += ("Zentrix",)
    return pool


def _find_alias(low: str, alias: str) -> int:
    """Position of ``alias`` in ``low`` (both lower-case); Latin aliases must stand as words."""
    start = 0
    while True:
        pos = low.find(alias, start)
        if pos < 0 or not alias.isascii():
            return pos
        end = pos + len(alias)
        if (pos == 0 or not low[pos - 1].isascii() or not low[pos - 1].isalnum()) and (
            end == len(low) or not low[end].isascii() or not low[end].isalnum()
        ):
            return pos
        start = pos + 1


@lru_cache(maxsize=8192)
def _question_brands(question: str, brands: tuple[SimBrand, ...]) -> tuple[int, ...]:
    """Tracked brands the question names, in order of appearance."""
    low = question.lower()
    hits = []
    for i, bi in enumerate(_infos(brands)):
        found = [p for p in (_find_alias(low, x) for x in bi.lowers) if p >= 0]
        if found:
            hits.append((min(found), i))
    hits.sort()
    return tuple(i for _, i in hits)


# --------------------------------------------------------------------------- composition


def _pick(rng: random.Random, seq):
    return seq[int(rng.random() * len(seq))]


class _Ctx:
    __slots__ = (
        "rng", "lang", "P", "pool", "style", "cat", "infos", "display", "mentioned", "think",
        "url_brands", "fullwidth", "year", "q", "msink", "usink", "qbrands",
    )

    def __init__(self, rng, lang, style, cat, infos, year, q, qbrands=()):
        self.rng = rng
        self.lang = lang
        self.P = _PH[lang]
        self.pool = _POOLS[(lang, cat[5])]
        self.style = style
        self.cat = cat
        self.infos = infos
        self.display: dict[int, str] = {}
        self.mentioned: dict[int, bool] = {}
        self.think: dict[int, bool] = {}
        self.url_brands: dict[int, bool] = {}
        # where mentions / URL appearances are recorded (redirected while building references,
        # which may end up not being printed)
        self.msink = self.mentioned
        self.usink = self.url_brands
        self.fullwidth = False
        self.year = year
        self.q = q
        self.qbrands = qbrands  # tracked brands named in the (possibly shortened) question text

    # -- brand names -------------------------------------------------------------
    def _own_other(self, bi: _BInfo, lang: str | None = None):
        if (lang or self.lang) == "zh":
            own, other = bi.zh, bi.en
        else:
            own, other = bi.en, bi.zh
        if not own:
            return other, ()
        return own, other

    def _short(self, own: tuple[str, ...]) -> str:
        if len(own) == 1 or self.rng.random() < 0.55:
            return own[0]
        return own[1 + int(self.rng.random() * (len(own) - 1))]

    def bname(self, i: int) -> str:
        """Render tracked brand ``i`` in the answer body and record the mention."""
        self.msink[i] = True
        rng = self.rng
        d = self.display.get(i)
        if d is not None:
            if rng.random() < 0.15:
                own, other = self._own_other(self.infos[i])
                return _pick(rng, other) if other and rng.random() < 0.3 else self._short(own)
            return d
        own, other = self._own_other(self.infos[i])
        x = rng.random()
        if other and x < self.style.mixed_alias_rate:
            short = self._short(own)
            self.display[i] = short
            o = _pick(rng, other)
            return f"{short}（{o}）" if self.lang == "zh" else f"{short} ({o})"
        if other and x < self.style.mixed_alias_rate + 0.07:
            a = _pick(rng, other)
        else:
            a = self._short(own)
        if self.fullwidth:
            latin = a if a.isascii() else min((x for x in self.infos[i].en if x.isascii()), key=len, default=None)
            if latin:
                self.fullwidth = False
                a = latin.translate(_FULLWIDTH)
        self.display[i] = a
        return a

    def plain(self, i: int, lang: str | None = None) -> str:
        """Short alias without touching the body's display choice (think block, labels)."""
        self.msink[i] = True
        return self._short(self._own_other(self.infos[i], lang)[0])

    def iname(self, item) -> str:
        return self.bname(item) if isinstance(item, int) else item

    def join(self, names: list[str]) -> str:
        P = self.P
        if len(names) <= 1:
            return "".join(names)
        return P["comma"].join(names[:-1]) + P["join_and"] + names[-1]

    # -- phrases -----------------------------------------------------------------
    def fill(self, tmpl: str, **kw) -> str:
        rng = self.rng
        if self.qbrands and "{q}" in tmpl:  # echoing the question repeats the brands it names
            for i in self.qbrands:
                self.msink[i] = True
        pool = self.pool
        pros = pool["pros"]
        p1 = _pick(rng, pros)
        p2 = _pick(rng, pros)
        if p2 == p1:
            p2 = pros[(pros.index(p1) + 1) % len(pros)]
        return tmpl.format(
            p1=p1, p2=p2, c=_pick(rng, pool["cons"]), u=_pick(rng, pool["uses"]),
            topic=self.cat[1] if self.lang == "zh" else self.cat[2],
            topic_pl=self.cat[1] if self.lang == "zh" else self.cat[3],
            c_topic=_pick(rng, self.P["c_topic"]), q=self.q, year=self.year, **kw,
        )

    def desc(self) -> str:
        rng = self.rng
        tmpl = _pick(rng, self.P["desc"])
        s = self.fill(tmpl)
        zh = self.lang == "zh"
        if rng.random() < self.style.verbosity - (0.35 if zh else 0.8):
            extra = self.P["desc_extra"] if "{c}" in tmpl or rng.random() < 0.6 else self.P["desc_extra_con"]
            s += ("" if zh else " ") + self.fill(_pick(rng, extra))
        return s


def _rand_digits(rng: random.Random, n: int) -> str:
    return str(int(rng.random() * 9 * 10 ** (n - 1)) + 10 ** (n - 1))


def _third_party(ctx: _Ctx, pair: list) -> tuple[str, str]:
    """A third-party reference (label, url); ``pair`` holds up to two tracked brand indices."""
    rng = ctx.rng
    use_zh = (ctx.lang == "zh") == (rng.random() < 0.8)
    domain, labels, kind = _pick(rng, _SITES_ZH if use_zh else _SITES_EN)
    label_t = _pick(rng, labels)
    has_pair = len(pair) >= 2
    kw = {}
    if "{a}" in label_t:
        if has_pair:
            site_lang = "zh" if use_zh else "en"
            kw["a"] = ctx.plain(pair[0], site_lang)
            if "{b}" in label_t:
                kw["b"] = ctx.plain(pair[1], site_lang)
        else:
            label_t = next((t for t in labels if "{a}" not in t), "{topic}")
    topic = ctx.cat[1] if use_zh else ctx.cat[2]
    topic_pl = ctx.cat[1] if use_zh else ctx.cat[3]
    label = label_t.format(topic=topic, topic_pl=topic_pl, year=ctx.year, **kw)
    slug = ctx.cat[4]
    if kind == "zhihu":
        url = (f"https://www.zhihu.com/question/{_rand_digits(rng, 9)}" if rng.random() < 0.6
               else f"https://zhuanlan.zhihu.com/p/{_rand_digits(rng, 9)}")
    elif kind == "36kr":
        url = f"https://36kr.com/p/{_rand_digits(rng, 13)}"
    elif kind == "csdn":
        url = f"https://blog.csdn.net/weixin_{_rand_digits(rng, 8)}/article/details/{_rand_digits(rng, 9)}"
    elif kind == "sspai":
        url = f"https://sspai.com/post/{_rand_digits(rng, 5)}"
    elif kind == "infoq":
        url = "https://www.infoq.cn/article/" + "".join(_pick(rng, _ALNUM) for _ in range(20))
    elif kind == "huxiu":
        url = f"https://www.huxiu.com/article/{_rand_digits(rng, 7)}.html"
    elif kind == "juejin":
        url = f"https://juejin.cn/post/{_rand_digits(rng, 19)}"
    elif kind == "g2":
        if has_pair and ("{a}" in label_t or "comparison" in label_t):
            a, b = pair[0], pair[1]
            url = f"https://www.g2.com/compare/{ctx.infos[a].slug}-vs-{ctx.infos[b].slug}"
            ctx.usink[a] = True
            ctx.usink[b] = True
        else:
            url = f"https://www.g2.com/categories/{slug}"
    elif kind == "techradar":
        url = f"https://www.techradar.com/best/best-{slug}"
    elif kind == "gartner":
        url = f"https://www.gartner.com/reviews/market/{slug}"
    elif kind == "capterra":
        url = f"https://www.capterra.com/{slug}-software/"
    elif kind == "reddit":
        url = "https://www.reddit.com/r/sysadmin/comments/" + "".join(_pick(rng, _ALNUM) for _ in range(6)) + "/"
    else:
        url = f"https://www.pcmag.com/picks/the-best-{slug}"
    return label, url


def _own_ref(ctx: _Ctx, i: int, generic: bool) -> tuple[str, str]:
    rng = ctx.rng
    bi = ctx.infos[i]
    host = _pick(rng, bi.hosts)
    ctx.usink[i] = True
    if generic:
        label, path = _pick(rng, ctx.P["own_label_generic"])
    else:
        label, path = _pick(rng, ctx.P["own_label"])
        label = label.format(n=ctx.plain(i))
    return label, f"https://{host}/{path}"


def _marker(kind: str, n: int) -> str:
    if kind == "caret":
        return f"[^{n}^]"
    if kind == "citation":
        return f"[citation:{n}]"
    if kind == "footnote":
        return f"[^{n}]"
    return f"[{n}]"


def _compose_valid(rng: random.Random, question: str, bt: tuple[SimBrand, ...], platform: str,
                   day: str | None, style: PlatformStyle, lang: str, cat: tuple, q: str) -> ComposedAnswer:
    infos = _infos(bt)
    n = len(infos)
    year = day[:4] if day and day[:4].isdigit() else "2025"
    ctx = _Ctx(rng, lang, style, cat, infos, year, q, _question_brands(q, bt) if n else ())
    P = ctx.P
    zh = lang == "zh"

    # ---- which tracked brands are options, in which order -----------------------------
    forced = [i for i in _question_brands(question, bt) if rng.random() < 0.92] if n else []
    x = rng.random()
    if n == 0:
        k = 0
    elif x < 0.06 and not forced:
        k = 0
    elif x < 0.16:
        k = 1
    else:
        k = _K_CHOICES[int(rng.random() * len(_K_CHOICES))]
        if style.verbosity > 1.1 and rng.random() < 0.3:
            k += 1
    k = min(max(k, len(forced)), n)
    chosen = list(forced)
    if k > len(chosen):
        ws = _weights(_pkey(platform), bt, day)
        taken = set(chosen)
        keyed = sorted(
            ((rng.random() ** (1.0 / ws[i]), i) for i in range(n) if i not in taken), reverse=True
        )
        chosen.extend(i for _, i in keyed[: k - len(chosen)])
    if len(chosen) > 2 and rng.random() < 0.25:  # occasional reordering of the ranking
        j = 1 + int(rng.random() * (len(chosen) - 1))
        chosen[j - 1], chosen[j] = chosen[j], chosen[j - 1]
    items: list = list(chosen)
    fillers_used: list[str] = []
    if k == 0:
        nf = 2 + int(rng.random() * 3)
    elif rng.random() < 0.2:
        nf = 1 + (rng.random() < 0.3)
    else:
        nf = 0
    if nf:
        pool = _fillers(bt, lang)
        for f in rng.sample(pool, min(nf, len(pool))):
            fillers_used.append(f)
            pos = len(items) if rng.random() < 0.6 else int(rng.random() * (len(items) + 1))
            items.insert(pos, f)
    chosen_set = set(chosen)
    others = [i for i in range(n) if i not in chosen_set]

    # ---- advised against -------------------------------------------------------------
    against: int | None = None
    against_in_item = False
    if n and rng.random() < style.against_rate:
        if others and (not chosen or rng.random() < 0.5):
            against = _pick(rng, others)
        elif chosen:
            against = chosen[-1] if rng.random() < 0.6 else _pick(rng, chosen)
            against_in_item = rng.random() < 0.5

    # ---- structure -------------------------------------------------------------------
    y = rng.random()
    structure = STRUCTURES[-1]
    for s, c in zip(STRUCTURES, style._structure_cum):
        if y < c:
            structure = s
            break
    if len(items) == 1 and structure in ("table", "numbered") and rng.random() < 0.6:
        structure = "prose"
    if structure == "prose":  # generic labels ("其他厂商") do not read as sentence subjects
        kept = [it for it in items if it not in _GENERIC]
        if not kept:
            kept = [next(f for f in _fillers(bt, lang) if f not in _GENERIC)]
            fillers_used.append(kept[0])
        fillers_used = [f for f in fillers_used if f in kept]
        items = kept

    # ---- citations -------------------------------------------------------------------
    cite = rng.random() < style.citation_rate
    show_refs = cite and rng.random() < style.reference_block_rate
    refs: list[tuple[str, str]] = []
    own_ref_no: dict[int, int] = {}
    if cite:
        ctx.msink, ctx.usink = {}, {}
        for i in chosen:
            if infos[i].hosts and len(refs) < 4 and rng.random() < 0.45:
                refs.append(_own_ref(ctx, i, rng.random() < 0.3))
                own_ref_no[i] = len(refs)
        if others and rng.random() < 0.25:  # a brand that shows up only through its URL
            j = _pick(rng, others)
            if infos[j].hosts:
                refs.append(_own_ref(ctx, j, True))
        for _ in range(1 + int(rng.random() * 3)):
            pair = chosen[:2] if rng.random() < 0.7 else ([chosen[0], _pick(rng, others)] if chosen and others else chosen[:2])
            refs.append(_third_party(ctx, pair))
        if len(refs) > 2 and rng.random() < 0.5:
            order = list(range(len(refs)))
            rng.shuffle(order)
            refs = [refs[o] for o in order]
            remap = {old + 1: new + 1 for new, old in enumerate(order)}
            own_ref_no = {i: remap[r] for i, r in own_ref_no.items()}
        if show_refs:
            ctx.mentioned.update(ctx.msink)
            ctx.url_brands.update(ctx.usink)
        ctx.msink, ctx.usink = ctx.mentioned, ctx.url_brands
    mk = style.citation_marker
    nrefs = len(refs)
    marker_rate = 0.75 if mk == "caret" else 0.5

    def cite_mark(item=None) -> str:
        if not cite or rng.random() >= marker_rate:
            return ""
        r = own_ref_no.get(item) if isinstance(item, int) else None
        if r is None:
            r = 1 + int(rng.random() * nrefs)
        m = _marker(mk, r)
        if nrefs > 1 and rng.random() < 0.2:
            r2 = 1 + int(rng.random() * nrefs)
            if r2 != r:
                m += _marker(mk, r2)
        return m

    # ---- traps -----------------------------------------------------------------------
    trap_slot = -1
    trap_text = ""
    if rng.random() < style.trap_rate:
        trap_slot = int(rng.random() * (len(items) + 2))  # 0 intro, len+1 summary, else item
        if 1 <= trap_slot <= len(items):
            trap_text = _pick(rng, _TRAPS_ITEM[lang] if rng.random() < 0.6 else _TRAPS_GENERAL[lang])
        else:
            trap_text = _pick(rng, _TRAPS_GENERAL[lang])
    ctx.fullwidth = rng.random() < (0.05 if zh else 0.01)
    sp = "" if zh else " "

    # ---- URL inside the body ---------------------------------------------------------
    url_item = None
    url_line = ""  # attached to url_item's description
    url_tail = ""  # a paragraph after the summary
    u = rng.random()
    if u < 0.07:
        cands = [i for i in chosen if infos[i].hosts]
        if cands:
            url_item = _pick(rng, cands)
            host = _pick(rng, infos[url_item].hosts)
            ctx.url_brands[url_item] = True
            url_line = _pick(rng, P["url_own"]).format(url=f"https://{host}/{_pick(rng, _OWN_PATHS)}")
    elif u < 0.12 and chosen and n >= 2:
        a = chosen[0]
        b = _pick(rng, others) if others and rng.random() < 0.6 else (chosen[1] if len(chosen) > 1 else None)
        if b is not None:
            ctx.url_brands[a] = True
            ctx.url_brands[b] = True
            url_compare = f"https://www.g2.com/compare/{infos[a].slug}-vs-{infos[b].slug}"
            url_tail = _pick(rng, P["url_compare"]).format(url=url_compare)

    out: list[str] = []

    # ---- <think> ---------------------------------------------------------------------
    has_think = rng.random() < style.think_rate
    if has_think:
        tnames = []
        for it in [x for x in items if x not in _GENERIC][:3]:
            if isinstance(it, int):
                tnames.append(ctx.plain(it))
                ctx.think[it] = True
            else:
                tnames.append(it)
        extra_t = _pick(rng, P["think_extra"])
        extra = ""
        if extra_t:
            cand = others if others and rng.random() < 0.5 else chosen[3:]
            if cand:
                o = _pick(rng, cand)
                ctx.think[o] = True
                extra = ctx.fill(extra_t, o=ctx.plain(o))
        a_list = ctx.join(tnames) if tnames else ("几个主流产品" if zh else "the main vendors")
        think_t = _pick(rng, P["think"])
        if "{q}" in think_t:
            for i in ctx.qbrands:
                ctx.think[i] = True
        body = ctx.fill(think_t, a=a_list, extra=extra)
        out.append(f"<think>\n{body}\n</think>\n")

    # ---- heading + intro -------------------------------------------------------------
    if rng.random() < 0.12:
        out.append(ctx.fill(_pick(rng, P["heading"])) + "\n")
    if structure == "table":
        intro = ctx.fill(_pick(rng, P["intro_table" if rng.random() < 0.6 else "intro"]))
    elif structure == "prose":
        intro = ctx.fill(_pick(rng, P["intro_prose"]))
    else:
        intro = ctx.fill(_pick(rng, P["intro"]))
    if structure != "table" and rng.random() < (0.55 if zh else 0.2) * style.verbosity:
        more = ctx.fill(_pick(rng, P["intro_more"]))
        intro = more + sp + intro if intro[-1] in "：:" else intro + sp + more
    if trap_slot == 0:
        intro = trap_text + sp + intro if rng.random() < 0.5 else intro.rstrip("：:") + ("。" if zh else ".") + sp + trap_text
    mark = cite_mark()
    if mark and intro[-1] in "：:":
        out.append(intro[:-1] + mark + intro[-1])
    else:
        out.append(intro + mark)
    out.append("")

    # ---- per-item text ---------------------------------------------------------------
    def item_desc(idx: int, item) -> str:
        s = ctx.desc()
        if trap_slot == idx + 1:
            s += sp + trap_text
        s += cite_mark(item)
        if against_in_item and item == against:
            s += sp + ctx.fill(_pick(rng, P["against_inline"]))
        if url_item is not None and item == url_item and url_line:
            s += sp + url_line
        return s

    def sub_bullets(item) -> list[str]:
        if rng.random() >= style.sub_bullet_rate:
            return []
        res = []
        cnt = 1 + int(rng.random() * (2 + (style.verbosity > 1.0)))
        subs = P["sub"]
        start = int(rng.random() * len(subs))
        passing = False
        for j in range(cnt):
            if n >= 2 and not passing and rng.random() < 0.3:
                passing = True
                cands = [i for i in range(n) if i != item]
                o = _pick(rng, cands)
                nm = ctx.bname(o)
                if zh and nm[:1].isascii():
                    nm = f" {nm} "
                res.append(ctx.fill(_pick(rng, P["sub_passing"]), o=nm))
            else:
                res.append(ctx.fill(subs[(start + j) % len(subs)]))
        return res

    def emoji() -> str:
        return _pick(rng, _EMOJIS) + " " if style.emoji_rate and rng.random() < style.emoji_rate else ""

    bold_list = rng.random() < style.bold_names  # one choice per answer, like a real writer

    def boldify(nm: str) -> str:
        return f"**{nm}**" if bold_list or rng.random() < 0.03 else nm

    if structure == "numbered":
        sep = _pick(rng, P["sep"])
        for idx, it in enumerate(items):
            out.append(f"{idx + 1}. {emoji()}{boldify(ctx.iname(it))}{sep}{item_desc(idx, it)}")
            for sb in sub_bullets(it):
                out.append(f"   - {sb}")
    elif structure == "bullets":
        sep = _pick(rng, P["sep"])
        bullet = "- " if rng.random() < 0.8 else "* "
        for idx, it in enumerate(items):
            out.append(f"{bullet}{emoji()}{boldify(ctx.iname(it))}{sep}{item_desc(idx, it)}")
            for sb in sub_bullets(it):
                out.append(f"  - {sb}")
    elif structure == "table":
        head, rule, cols = _pick(rng, P["table_head"])
        out.append(head)
        out.append(rule)
        pool = ctx.pool
        bold_cells = rng.random() < style.bold_names
        notes: list[str] = []
        for idx, it in enumerate(items):
            nm = ctx.iname(it)
            cells = [f"**{nm}**" if bold_cells else nm]
            for c in cols:
                if c == "p":
                    cell = _pick(rng, pool["pros"])
                elif c == "c":
                    cell = _pick(rng, pool["cons"])
                elif c == "u":
                    cell = _pick(rng, pool["uses"])
                elif c == "price":
                    cell = _pick(rng, P["price"])
                else:
                    cell = _pick(rng, P["star"])
                cells.append(cell)
            if not zh:
                cells[1:] = [c[0].upper() + c[1:] if c[:1].islower() else c for c in cells[1:]]
            cells[1] += cite_mark(it)
            out.append("| " + " | ".join(cells) + " |")
            if trap_slot == idx + 1:
                notes.append(trap_text)
            if against_in_item and it == against:
                notes.append(nm + ("：" if zh else ": ") + ctx.fill(_pick(rng, P["against_inline"])))
            if url_item is not None and it == url_item and url_line:
                notes.append(url_line)
        named = [it for it in items if it not in _GENERIC]
        if len(named) >= 2 and rng.random() < 0.7:
            a = named[0]
            b = named[1 + int(rng.random() * (len(named) - 1))]
            notes.insert(0, ctx.fill(_pick(rng, P["table_after"]), a=ctx.iname(a), b=ctx.iname(b)))
        elif rng.random() < 0.5:
            notes.insert(0, _pick(rng, P["table_after1"]))
        if notes:
            out.append("")
            out.append(sp.join(notes))
    elif structure == "headings":
        hp = style.heading_prefix
        numbered = rng.random() < style.numbered_headings
        for idx, it in enumerate(items):
            nm = ctx.iname(it)
            out.append(f"{hp} {idx + 1}. {nm}" if numbered else f"{hp} {nm}")
            out.append("")
            out.append(item_desc(idx, it))
            sbs = sub_bullets(it)
            if sbs:
                out.append("")
                out.extend(f"- {sb}" for sb in sbs)
            out.append("")
        out.pop()
    elif structure == "bold_lines":
        for idx, it in enumerate(items):
            out.append(f"{emoji()}**{ctx.iname(it)}**")
            out.append(item_desc(idx, it))
            sbs = sub_bullets(it)
            if sbs:
                out.extend(f"- {sb}" for sb in sbs)
            out.append("")
        out.pop()
    else:  # prose
        names = [ctx.iname(it) for it in items[:4]]
        para = [ctx.fill(_pick(rng, P["list_sentence"]), list=ctx.join(names))] if len(items) > 1 else []
        paras = []
        for idx, it in enumerate(items):
            # the first mention of each name was in the list sentence; keep later ones stable
            nm = ctx.iname(it) if not isinstance(it, int) else ctx.bname(it)
            s = ctx.fill(_pick(rng, P["prose_first" if idx == 0 else "prose_item"]), n=nm)
            if rng.random() < style.verbosity - (0.4 if zh else 0.75) or len(items) == 1:
                s += sp + ctx.fill(_pick(rng, P["desc_extra"]))
            if len(items) == 1:
                s += sp + ctx.desc()
            if trap_slot == idx + 1:
                s += sp + trap_text
            s += cite_mark(it)
            if against_in_item and it == against:
                s += sp + ctx.fill(_pick(rng, P["against_inline"]))
            if url_item is not None and it == url_item and url_line:
                s += sp + url_line
            para.append(s)
            if len(para) >= 3 and rng.random() < 0.4:
                paras.append(sp.join(para))
                para = []
        if para:
            paras.append(sp.join(para))
        for p_ in paras:
            out.append(p_)
            out.append("")
        out.pop()

    # ---- advised against (in prose) ----------------------------------------------------
    if against is not None and not against_in_item:
        out.append("")
        lead = _pick(rng, P["against_lead"])
        tmpl = _pick(rng, P["against"])
        if lead.endswith(", ") and tmpl[0] in "SO":
            tmpl = tmpl[0].lower() + tmpl[1:]
        out.append(lead + ctx.fill(tmpl, n=ctx.bname(against)))

    # ---- summary ---------------------------------------------------------------------
    if rng.random() < (0.95 if structure == "table" else 0.85):
        good = [it for it in items if it != against and it not in _GENERIC]
        prefix = _pick(rng, P["summary_prefix"])
        cap = not zh and (prefix.endswith("\n\n") or prefix.startswith("**") or prefix.startswith("TL"))
        r2 = rng.random()
        if len(good) >= 2 and r2 < 0.65:
            tmpl, kw = _pick(rng, P["summary2"]), None
            a = good[0]
            b = good[1] if rng.random() < 0.7 else good[-1]
            kw = {"a": ctx.iname(a), "b": ctx.iname(b)}
        elif good and r2 < 0.85:
            tmpl = _pick(rng, P["summary1"])
            kw = {"a": ctx.iname(good[0])}
        else:
            tmpl, kw = _pick(rng, P["summary0"]), {}
        if cap and tmpl[0].islower():
            tmpl = tmpl[0].upper() + tmpl[1:]
        body = ctx.fill(tmpl, **kw)
        if trap_slot == len(items) + 1:
            body += sp + trap_text
        out.append("")
        out.append(prefix + body + cite_mark())
    elif trap_slot == len(items) + 1:
        out.append("")
        out.append(trap_text)
    if url_tail:
        out.append("")
        out.append(url_tail)
    if rng.random() < 0.2 * style.verbosity:
        out.append("")
        out.append(_pick(rng, P["closing"]))

    # ---- reference block -------------------------------------------------------------
    if show_refs:
        out.append("")
        out.append(_pick(rng, P["ref_heading"]))
        fmt = int(rng.random() * 3)
        for no, (label, url) in enumerate(refs, 1):
            if fmt == 0:
                head = f"[^{no}^]" if mk == "caret" and rng.random() < 0.5 else f"[{no}]"
                out.append(f"{head} {label} {url}")
            elif fmt == 1:
                out.append(f"{no}. [{label}]({url})")
            else:
                colon = " " if label[-1] in "？?!！:：" else ("：" if zh else ": ")
                out.append(f"[{no}] {label}{colon}{url}")

    text = "\n".join(out).strip("\n") + "\n" * (rng.random() < 0.1)

    names = [bi.name for bi in infos]
    mentioned = tuple(names[i] for i in range(n) if i in ctx.mentioned)
    url_only = tuple(names[i] for i in range(n) if i in ctx.url_brands and i not in ctx.mentioned)
    return ComposedAnswer(
        text=text,
        kind="answer",
        language=lang,
        structure=structure,
        options=tuple(names[i] for i in chosen),
        other_options=tuple(fillers_used),
        mentioned=mentioned,
        think_mentions=tuple(names[i] for i in range(n) if i in ctx.think),
        advised_against=(names[against],) if against is not None else (),
        url_only=url_only,
        cited=cite,
        has_think=has_think,
    )


def compose_answer_detailed(rng: random.Random, question: str, brands: Sequence[SimBrand], platform: str,
                            day: str | None = None) -> ComposedAnswer:
    """Like :func:`compose_answer`, but also returns the ground truth of the answer."""
    bt = tuple(brands)
    style = style_for(platform)
    lang, cat, q = _analyze(question)
    r = rng.random()
    t = style.refusal_rate
    if r < t:
        return ComposedAnswer(text=_pick(rng, _REFUSALS[lang]), kind="refusal", language=lang)
    t += style.empty_rate
    if r < t:
        return ComposedAnswer(text=_pick(rng, _EMPTIES), kind="empty", language=lang)
    t += style.error_rate
    if r < t:
        return ComposedAnswer(text=_pick(rng, _ERRORS), kind="error", language=lang)
    t += style.irrelevant_rate
    if r < t:
        return ComposedAnswer(text=_pick(rng, _IRRELEVANT[lang]), kind="irrelevant", language=lang)
    return _compose_valid(rng, question, bt, platform, day, style, lang, cat, q)


def compose_answer(rng: random.Random, question: str, brands: Sequence[SimBrand], platform: str,
                   day: str | None = None) -> str:
    """The answer text for one chat completion; deterministic given the rng state and arguments."""
    return compose_answer_detailed(rng, question, brands, platform, day).text


if __name__ == "__main__":  # pragma: no cover - manual preview
    import sys

    _demo = (
        SimBrand("阿里云", ("阿里云", "Alibaba Cloud", "Aliyun"), ("aliyun.com",)),
        SimBrand("腾讯云", ("腾讯云", "Tencent Cloud"), ("cloud.tencent.com",)),
        SimBrand("华为云", ("华为云", "Huawei Cloud"), ("huaweicloud.com",)),
        SimBrand("AWS", ("AWS", "Amazon Web Services", "亚马逊云科技"), ("aws.amazon.com",)),
        SimBrand("Azure", ("Azure", "Microsoft Azure", "微软云"), ("azure.microsoft.com",)),
    )
    _seed = int(sys.argv[1]) if len(sys.argv) > 1 else 1
    _plat = sys.argv[2] if len(sys.argv) > 2 else "deepseek"
    for _q in ("中小企业用哪家云数据库比较好？", "Which cloud platform is best for a startup?"):
        print(compose_answer(random.Random(_seed), _q, _demo, _plat, "2025-03-01"))
        print("=" * 60)
