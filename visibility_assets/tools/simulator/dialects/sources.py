"""Where a simulated platform's answers get their facts: third-party sites and the brands' own, and
the citation marks that point at them."""

from __future__ import annotations

import random
from dataclasses import dataclass
from datetime import date, timedelta
from urllib.parse import quote

from visibility_assets.tools.simulator.answers import SimBrand
from visibility_assets.tools.simulator.answers.inputs import has_cjk, read_question


@dataclass
class Source:
    url: str
    title: str
    site: str  # the site's display name
    domain: str
    summary: str
    date: str | None  # YYYY-MM-DD


# --- sources ------------------------------------------------------------------------------

@dataclass(frozen=True)
class _Site:
    name: str
    domain: str
    url: str  # {n:9} digits, {a:8} letters and digits, {slug}, {topic}
    title: str  # {topic}, {year}
    language: str


THIRD_PARTY_SITES = (
    _Site("知乎", "zhihu.com", "https://www.zhihu.com/question/{n:9}", "{topic}哪个好？有什么推荐？ - 知乎", "zh"),
    _Site("知乎专栏", "zhihu.com", "https://zhuanlan.zhihu.com/p/{n:9}", "{year}年{topic}横评：怎么选不踩坑", "zh"),
    _Site("百度百科", "baike.baidu.com", "https://baike.baidu.com/item/{topic_q}", "{topic}_百度百科", "zh"),
    _Site("36氪", "36kr.com", "https://36kr.com/p/{n:13}", "{year}年{topic}市场观察-36氪", "zh"),
    _Site("什么值得买", "smzdm.com", "https://post.smzdm.com/p/{a:8}/", "{topic}选购指南 | 什么值得买", "zh"),
    _Site("少数派", "sspai.com", "https://sspai.com/post/{n:5}", "我用过的几款{topic}，聊聊真实体验 - 少数派", "zh"),
    _Site("CSDN博客", "csdn.net", "https://blog.csdn.net/{a:8}/article/details/{n:9}", "{topic}对比与选型总结_CSDN博客",
          "zh"),
    _Site("Reddit", "reddit.com", "https://www.reddit.com/r/{sub}/comments/{a:6}/{slug}/",
          "Which {topic} do you actually use? : r/{sub}", "en"),
    _Site("Wikipedia", "en.wikipedia.org", "https://en.wikipedia.org/wiki/{wiki}", "{Topic} - Wikipedia", "en"),
    _Site("TechRadar", "techradar.com", "https://www.techradar.com/best/{slug}", "The best {topics} of {year} | TechRadar",
          "en"),
    _Site("G2", "g2.com", "https://www.g2.com/categories/{slug}", "Best {Topics} in {year}: Compare Reviews | G2", "en"),
)
OWN_SITE_SHARE = 0.35  # answers whose sources include a tracked brand's own site


def draw_sources(rng: random.Random, question: str, brands: tuple[SimBrand, ...], day: str | None) -> list[Source]:
    """2-4 sources a search found: mostly third-party sites, sometimes a tracked brand's own."""
    zh = has_cjk(question)
    category = read_question(question).category
    year = day[:4] if day and day[:4].isdigit() else "2025"
    count = rng.randint(2, 4)
    sources: list[Source] = []
    owners = [b for b in brands if b.domains]
    if owners and rng.random() < OWN_SITE_SHARE:
        brand = owners[int(rng.random() * len(owners))]
        domain = brand.domains[int(rng.random() * len(brand.domains))]
        page = ("", "products/", "pricing/", "about/")[int(rng.random() * 4)]
        title = f"{brand.name}官网" if zh else f"{brand.name} - Official Site"
        host = domain if domain.count(".") >= 2 else "www." + domain
        sources.append(Source(f"https://{host}/{page}", title, brand.name, domain,
                              f"{brand.name}的产品与价格介绍。" if zh else f"{brand.name} products and pricing.",
                              _date(rng, day)))
    used: set[str] = set()
    while len(sources) < count:
        same_language = rng.random() < 0.8
        language = ("zh" if zh else "en") if same_language else ("en" if zh else "zh")
        candidates = [s for s in THIRD_PARTY_SITES if s.language == language and s.url not in used]
        if not candidates:
            candidates = [s for s in THIRD_PARTY_SITES if s.url not in used]
        site = candidates[int(rng.random() * len(candidates))]
        used.add(site.url)
        topic = category.zh if language == "zh" else category.en
        topics = category.zh if language == "zh" else category.en_plural
        fields = {"topic": topic, "Topic": topic[:1].upper() + topic[1:], "topics": topics,
                  "Topics": topics[:1].upper() + topics[1:], "year": year, "slug": category.slug,
                  "topic_q": quote(topic), "wiki": quote(topic[:1].upper() + topic[1:].replace(" ", "_")),
                  "sub": ("BuyItForLife", "sysadmin", "technology", "AskReddit")[int(rng.random() * 4)]}
        title = site.title.format(**fields)
        summary = (f"{title}：从价格、体验和口碑几个方面做了对比。" if language == "zh"
                   else f"{title}: a comparison of price, experience and reviews.")
        sources.append(Source(_fill_url(rng, site.url, fields), title, site.name, site.domain, summary,
                              _date(rng, day)))
    if len(sources) > 2 and rng.random() < 0.5:
        rng.shuffle(sources)
    return sources


def _fill_url(rng: random.Random, template: str, fields: dict) -> str:
    out, i = [], 0
    while i < len(template):
        if template[i] != "{":
            out.append(template[i])
            i += 1
            continue
        end = template.index("}", i)
        name, _, size = template[i + 1:end].partition(":")
        if name == "n":
            n = int(size)
            out.append(str(int(rng.random() * 9 * 10 ** (n - 1)) + 10 ** (n - 1)))
        elif name == "a":
            out.append("".join("abcdefghijklmnopqrstuvwxyz0123456789"[int(rng.random() * 36)]
                               for _ in range(int(size))))
        else:
            out.append(fields[name])
        i = end + 1
    return "".join(out)


def _date(rng: random.Random, day: str | None) -> str | None:
    if rng.random() < 0.15:
        return None
    try:
        base = date.fromisoformat(day) if day else date(2025, 6, 1)
    except ValueError:
        base = date(2025, 6, 1)
    return (base - timedelta(days=int(rng.random() * 700))).isoformat()


def cite_in_text(text: str, sources: list[Source], rng: random.Random, marker, wrap: tuple[str, str] = ("", "")
                 ) -> tuple[str, list[tuple[int, int, int]]]:
    """Append a marker for each source to a line of prose (a source may be cited twice); the
    text and each marker's (source, start, end). Sources no line can carry go on a last line."""
    if not sources:
        return text, []
    lines = text.split("\n")
    prose, in_think = [], False
    for number, line in enumerate(lines):
        stripped = line.strip()
        if stripped.startswith("<think>"):
            in_think = True
        if not in_think and stripped and stripped[0] not in "|#`>" and not stripped.startswith("---"):
            prose.append(number)
        if "</think>" in stripped:
            in_think = False
    chosen: dict[int, list[int]] = {}
    for source in range(len(sources)):
        if prose:
            chosen.setdefault(prose[int(rng.random() * len(prose))], []).append(source)
    if prose and rng.random() < 0.4:
        chosen.setdefault(prose[int(rng.random() * len(prose))], []).append(int(rng.random() * len(sources)))
    cited = {s for group in chosen.values() for s in group}
    tail = [s for s in range(len(sources)) if s not in cited]
    if tail:
        if text.strip():
            lines.append("")
        chosen.setdefault(len(lines) - 1, []).extend(tail)
    spans: list[tuple[int, int, int]] = []
    out: list[str] = []
    offset = 0
    for number, line in enumerate(lines):
        for source in sorted(set(chosen.get(number, ()))):
            mark = marker(source + 1, sources[source])
            lead = (" " + wrap[0] if line else wrap[0]) if wrap[0] else ""
            start = offset + len(line) + len(lead)
            spans.append((source, start, start + len(mark)))
            line = line + lead + mark + wrap[1]
        out.append(line)
        offset += len(line) + 1
    return "\n".join(out), spans


# --- reasoning ----------------------------------------------------------------------------
