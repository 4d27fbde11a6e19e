"""What the generator reads off its inputs: the question's language and topic, the brands'
aliases per language, hosts and slugs, the brands a question names.  Questions and brand
sets repeat across a run, so each is worked out once (cached)."""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

from visibility_assets.tools.simulator.answers.model import SimBrand
from visibility_assets.tools.simulator.answers.phrases import Category, categories, common_texts, phrases


def has_cjk(text: str) -> bool:
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


@dataclass(frozen=True, slots=True)
class QuestionInfo:
    language: str  # "zh" when the question holds any CJK character, else "en"
    category: Category
    quote: str  # the question as an answer quotes it: shortened, no braces (it goes through str.format)


@lru_cache(maxsize=8192)
def read_question(question: str) -> QuestionInfo:
    language = "zh" if has_cjk(question) else "en"
    listed, default = categories()
    padded = " " + question.lower()  # lets " ev" match at the very start
    category = next((c for c in listed if any(k in padded for k in c.keywords)), default)
    quote = question.strip().rstrip("?？!！。.")
    limit = 40 if language == "zh" else 70
    if len(quote) > limit:
        quote = quote[:limit] + "…"
    return QuestionInfo(language, category, quote.replace("{", "(").replace("}", ")"))


class BrandInfo:
    """A tracked brand as the writer needs it."""

    __slots__ = ("name", "zh", "en", "aliases_for", "hosts", "slug", "lowercase_aliases")

    def __init__(self, brand: SimBrand) -> None:
        self.name = brand.name
        zh: list[str] = []
        en: list[str] = []
        for alias in (brand.name,) + tuple(brand.aliases):
            alias = alias.strip()
            if not alias:
                continue
            same_script = zh if has_cjk(alias) else en
            if alias not in same_script:
                same_script.append(alias)
        if not zh and not en:
            en.append(brand.name or "?")
        self.zh = tuple(zh)
        self.en = tuple(en)
        # per answer language: the aliases in its script, and those in the other one (a
        # brand with none in the answer's script is written with the other's)
        self.aliases_for = {"zh": (self.zh, self.en) if self.zh else (self.en, ()),
                            "en": (self.en, self.zh) if self.en else (self.zh, ())}
        domains = tuple(d.strip().lower() for d in brand.domains if d.strip())
        self.hosts = tuple(d if d.count(".") >= 2 or d.startswith("www.") else "www." + d for d in domains)
        base = self.en[0] if self.en else (domains[0].split(".")[0] if domains else "brand")
        self.slug = "".join(ch if ch.isalnum() else "-" for ch in base.lower()).strip("-") or "brand"
        self.lowercase_aliases = tuple(dict.fromkeys(
            x.lower() for x in (brand.name,) + tuple(brand.aliases) if len(x.strip()) >= 2))


@lru_cache(maxsize=1024)
def brand_infos(brands: tuple[SimBrand, ...]) -> tuple[BrandInfo, ...]:
    return tuple(BrandInfo(b) for b in brands)


@lru_cache(maxsize=1024)
def fillers_for(brands: tuple[SimBrand, ...], language: str, category: Category) -> tuple[str, ...]:
    """The untracked option labels usable beside these brands: the category's real competitors,
    made-up products and generic labels. None may contain a tracked alias (the ground truth
    would miss that mention), and at least one is a product name."""
    aliases = [a for info in brand_infos(brands) for a in info.lowercase_aliases]
    texts = phrases(language)
    usable = tuple(f for f in category.competitors + texts.fillers if not any(a in f.lower() for a in aliases))
    if all(f in texts.generic_fillers for f in usable):
        usable += (common_texts().last_resort_filler,)
    return usable


def find_alias(text: str, alias: str) -> int:
    """Position of ``alias`` in ``text`` (both lower-case); Latin aliases must stand as words."""
    start = 0
    while True:
        pos = text.find(alias, start)
        if pos < 0 or not alias.isascii():
            return pos
        end = pos + len(alias)
        if (pos == 0 or not text[pos - 1].isascii() or not text[pos - 1].isalnum()) and (
            end == len(text) or not text[end].isascii() or not text[end].isalnum()
        ):
            return pos
        start = pos + 1


@lru_cache(maxsize=8192)
def question_brands(question: str, brands: tuple[SimBrand, ...]) -> tuple[int, ...]:
    """Tracked brands the question names, in order of appearance."""
    text = question.lower()
    hits = []
    for i, info in enumerate(brand_infos(brands)):
        found = [p for p in (find_alias(text, a) for a in info.lowercase_aliases) if p >= 0]
        if found:
            hits.append((min(found), i))
    hits.sort()
    return tuple(i for _, i in hits)
