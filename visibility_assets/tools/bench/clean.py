"""`visibility bench clean`: the analyzer against the naive per-alias `str.find` loop.

The corpus is N answers written by the simulator's answer generator over a generated
catalog of M aliases (about three per brand, Chinese and Latin, in 8 categories). Both
sides run on the same answers in the same process, one core. The baseline finds every
occurrence of every alias of the catalog in the case-folded answer (what a matcher must
do before any rule applies); it is timed on a seeded random sample of the corpus when the
corpus is large, since it is the slow side, and reported per answer. (A prefix of the corpus
would not do: its first answers run 2-3% longer than the mean.)
"""

from __future__ import annotations

import random
import sys
import time
from pathlib import Path

from visibility_assets.clean.analyzer import Analyzer
from visibility_assets.clean.samples import RawAnswer, SampleCleaner
from visibility_assets.clean.stage_clock import StageClock
from visibility_assets.clean.text import find_scope, normalize
from visibility_assets.config import Brand, BrandCatalog
from visibility_assets.tools.simulator.answers import KNOWN_PLATFORMS, compose_answer, sim_brands_by_category

# Brand-name characters: a pool large enough that generated names rarely sit inside one another.
SYLLABLES = ("云智数星海天行鲸帆川岚峰芯途链羽辰光启明泽恒通达易捷信安华创新源博远瑞凌景卓越朗"
             "鸿宇宏图极睿融汇聚象盘古麒麟玄武朱雀青龙白虎凤凰鹏飞腾跃翔翼驰骋骏骐麟灵犀锐鑫森淼焱垚"
             "磊晶昊旻昕曜晟晔炜煜燊璟瑾琛瑜璞珩琨瑶玥珂岳崇峻嵘巍峥嵩屹松柏桐楠樟梧桦榕栩槿")
LATIN = ["nova", "quill", "stack", "orbit", "grid", "flux", "nimbus", "apex", "vertex", "lumen", "cobalt",
         "zenith", "aurora", "helix", "pulse", "vector", "summit", "harbor", "cedar", "maple", "ember"]
CATEGORIES = ("cloud", "phone", "crm", "ev", "workspace", "database", "security", "analytics")
QUESTIONS = {
    "cloud": "有哪些适合企业的云服务器方案？", "phone": "预算3000元买什么手机好？",
    "crm": "Which CRM is best for a small B2B startup?", "ev": "预算20万以内买哪款新能源车？",
    "workspace": "团队协作办公软件怎么选？", "database": "Which managed database should a startup pick?",
    "security": "企业终端安全产品推荐哪些？", "analytics": "What are the best product analytics tools?",
}
BASELINE_SAMPLE = 1000
OVERSIZED_CHARS = 5_000_000


def generate_catalog(alias_count: int, seed: int = 0) -> BrandCatalog:
    rng = random.Random(seed)
    brands, used, index = [], set(), 0
    while sum(len(b.aliases) for b in brands) < alias_count:
        category = CATEGORIES[index % len(CATEGORIES)]
        index += 1
        cjk = "".join(rng.choice(SYLLABLES) for _ in range(rng.choice((3, 3, 4))))
        latin = "".join(rng.choice(LATIN).capitalize() for _ in range(2)) + str(rng.randrange(10, 99))
        names = [cjk, latin, f"{cjk}{rng.choice(('科技', '云', 'Pro', '智能'))}"]
        names = [n for n in names if n.casefold() not in used][: alias_count - sum(len(b.aliases) for b in brands)]
        if not names:
            continue
        used.update(n.casefold() for n in names)
        brands.append(Brand(name=names[0], category=category, aliases=tuple(names),
                            domains=(f"{latin.lower()}.com",)))
    return BrandCatalog(brands=tuple(brands), version=f"bench-{alias_count}", path=Path("<generated>"))


def generate_corpus(catalog: BrandCatalog, answers: int, seed: int = 0) -> list[tuple[str, str, str]]:
    rng = random.Random(seed)
    by_category = sim_brands_by_category(catalog)
    categories = catalog.categories
    corpus = []
    for i in range(answers):
        category = categories[i % len(categories)]
        question = QUESTIONS.get(category, "有哪些推荐的产品？")
        text = compose_answer(rng, question, by_category[category], KNOWN_PLATFORMS[i % len(KNOWN_PLATFORMS)])
        corpus.append((text, question, category))
    return corpus


def naive_find_all(text: str, aliases: list[str]) -> int:
    """The baseline: every alias searched separately with str.find."""
    folded, found = text.casefold(), 0
    for alias in aliases:
        position = folded.find(alias)
        while position != -1:
            found += 1
            position = folded.find(alias, position + 1)
    return found


def run_clean_bench(answers: int = 20000, aliases: int = 10000, seed: int = 0,
                    progress=lambda message: print(message, file=sys.stderr)) -> dict:
    catalog = generate_catalog(aliases, seed)
    progress(f"bench clean: generating {answers} answers over {aliases} aliases ({len(catalog.brands)} brands)")
    started = time.perf_counter()
    corpus = generate_corpus(catalog, answers, seed)
    corpus_s = time.perf_counter() - started
    folded_aliases = [a.casefold() for b in catalog.brands for a in b.aliases]

    started = time.perf_counter()
    analyzer = Analyzer(catalog)
    build_s = time.perf_counter() - started
    started = time.perf_counter()
    mentions = 0
    for text, question, category in corpus:
        result = analyzer.analyze(text, question, category)
        mentions += sum(b.mention_count for b in result.mentioned.values())
    analyzer_s = time.perf_counter() - started
    progress(f"analyzer: {answers / analyzer_s:,.0f} answers/s")

    started = time.perf_counter()
    for text, _, category in corpus:
        folded = normalize(text)
        analyzer.matcher.scan(folded.text, category, find_scope(folded.text))
    matching_s = time.perf_counter() - started
    stage_shares = time_stages(catalog, corpus)

    sample = random.Random(seed).sample(corpus, min(len(corpus), BASELINE_SAMPLE))
    started = time.perf_counter()
    for text, _, _ in sample:
        naive_find_all(text, folded_aliases)
    baseline_s = time.perf_counter() - started
    progress(f"baseline: {len(sample) / baseline_s:,.0f} answers/s")

    oversized_s = time_oversized_answer(catalog, corpus)
    progress(f"a {OVERSIZED_CHARS:,}-character answer: cleaned in {oversized_s:.2f} s")

    answers_per_s = answers / analyzer_s
    baseline_per_s = len(sample) / baseline_s
    return {
        "answers": answers,
        "aliases": sum(len(b.aliases) for b in catalog.brands),
        "brands": len(catalog.brands),
        "answers_per_s": round(answers_per_s, 1),
        "baseline_answers_per_s": round(baseline_per_s, 1),
        "speedup": round(answers_per_s / baseline_per_s, 1),
        "matching_answers_per_s": round(answers / matching_s, 1),
        "matching_speedup": round(answers / matching_s / baseline_per_s, 1),
        "analyzer_share_of_matching": round(matching_s / analyzer_s, 3),
        "stage_shares": stage_shares,
        "analyzer_s": round(analyzer_s, 3),
        "automaton_build_s": round(build_s, 3),
        "baseline_sample_answers": len(sample),
        "baseline_s": round(baseline_s, 3),
        "mean_answer_chars": _mean_chars(corpus),
        "baseline_sample_mean_chars": _mean_chars(sample),
        "accepted_mentions": mentions,
        "corpus_answers_per_s": round(answers / corpus_s, 1),
        "oversized_answer_chars": OVERSIZED_CHARS,
        "oversized_answer_s": round(oversized_s, 3),
        "definition": "answers_per_s and speedup: the full analyzer (validity, scope, matching and rules,"
                      " lists, recommendation, sentiment, citations) on one core; matching_*: normalization,"
                      " scope and the alias matcher's one pass (which also locates the analyzer's cue words)"
                      " with its rules only; baseline: per-alias str.find over all aliases"
                      " on the case-folded answer (matching only), timed on baseline_sample_answers answers drawn"
                      " at random (seeded) from the corpus; corpus_answers_per_s: the simulator's answer"
                      " generator writing the corpus; oversized_answer_s: cleaning one answer of"
                      " oversized_answer_chars (the corpus's answers repeated), analysed up to max_answer_chars;"
                      " analyzer_share_of_matching: answers_per_s / matching_answers_per_s (1.0: the analysis"
                      " costs no more than its matching); stage_shares: each stage's share of the analyzer's"
                      " time in a second run over the corpus with the analyzer's stage clock on (normalize_scope,"
                      " matching, rules after the pass, structure, validity, recommendation, sentiment,"
                      " citations)",
    }


def time_stages(catalog: BrandCatalog, corpus: list[tuple[str, str, str]]) -> dict[str, float]:
    """Each stage's share of the analyzer's time on the corpus, timed apart from answers_per_s
    (the clock costs a little)."""
    clock = StageClock()
    analyzer = Analyzer(catalog, clock=clock)
    for text, question, category in corpus:
        analyzer.analyze(text, question, category)
    return clock.shares()


def time_oversized_answer(catalog: BrandCatalog, corpus: list[tuple[str, str, str]]) -> float:
    """Seconds to clean one runaway answer: the cap must keep it near the cost of a normal one."""
    text, question, category = corpus[0]
    runaway = "\n".join(t for t, _, c in corpus if c == category) or text
    runaway = (runaway + "\n") * (OVERSIZED_CHARS // (len(runaway) + 1) + 1)
    cleaner = SampleCleaner(catalog, "bench")
    started = time.perf_counter()
    cleaner.clean([RawAnswer("bench", "2026-11-01", "bench", "q", question, category, 1, runaway[:OVERSIZED_CHARS])])
    return time.perf_counter() - started


def _mean_chars(answers: list[tuple[str, str, str]]) -> float:
    return round(sum(len(text) for text, _, _ in answers) / max(1, len(answers)), 1)
