"""What the answer generator takes and gives: brands in, an answer with its ground truth out."""

from __future__ import annotations

from dataclasses import dataclass

#: Layouts a valid answer can take.
STRUCTURES: tuple[str, ...] = ("numbered", "bullets", "table", "headings", "bold_lines", "prose")

#: Kinds of answer text.
KINDS: tuple[str, ...] = ("answer", "refusal", "empty", "error", "irrelevant")


@dataclass(frozen=True)
class SimBrand:
    name: str  # standard name, e.g. "阿里云"
    aliases: tuple[str, ...]  # e.g. ("阿里云", "Alibaba Cloud", "Aliyun")
    domains: tuple[str, ...]  # e.g. ("aliyun.com",)


def sim_brands_by_category(catalog) -> dict[str, tuple[SimBrand, ...]]:
    """The brands of a BrandCatalog (config.py) as the generator takes them, per category."""
    return {category: tuple(SimBrand(b.name, tuple(b.aliases), tuple(b.domains))
                            for b in catalog.for_category(category))
            for category in catalog.categories}


@dataclass(frozen=True)
class ComposedAnswer:
    """An answer text plus the ground truth of how it was built."""

    text: str
    kind: str  # one of KINDS
    language: str  # "zh" or "en"
    structure: str | None = None  # one of STRUCTURES for kind == "answer"
    options: tuple[str, ...] = ()  # tracked brand names listed as options, in list order
    other_options: tuple[str, ...] = ()  # untracked option labels (self-hosted, made-up products ...)
    other_brands: tuple[str, ...] = ()  # those of them that are products: what discovery should find
    mentioned: tuple[str, ...] = ()  # tracked brand names written anywhere (input order)
    think_mentions: tuple[str, ...] = ()  # tracked brand names written inside <think>
    advised_against: tuple[str, ...] = ()  # tracked brand names the answer advises against
    url_only: tuple[str, ...] = ()  # tracked brands whose domain/slug is in a URL but name never written
    cited: bool = False
    has_think: bool = False
    # Per brand written in the body: what the writer meant, the judge's ground truth.
    judgements: tuple[BrandJudgement, ...] = ()


@dataclass(frozen=True)
class BrandJudgement:
    """The sentiment the generator wrote for one brand: its strengths against its weaknesses
    (advice against counts as two), its role and the phrases it wrote, as claims."""

    brand: str
    sentiment: str  # positive | neutral | negative
    role: str  # recommended | option | passing | advised_against
    claims: tuple[str, ...]
