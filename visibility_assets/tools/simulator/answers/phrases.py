"""The generator's texts, read from tools/simulator/data/*.yaml on first use.

Nothing is read at import time: importing the simulator (the server, the benchmarks)
stays cheap, and the first answer pays for parsing the files once.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from importlib.resources import files

import yaml

Texts = tuple[str, ...]


@dataclass(frozen=True, slots=True)
class Pool:
    """What {pro}, {other_pro}, {con} and {audience} are filled with."""

    pros: Texts
    cons: Texts
    audiences: Texts


@dataclass(frozen=True, slots=True)
class TableLayout:
    header: str
    rule: str
    columns: Texts  # after the option column: "pro", "con", "audience", "price" or "rating"


@dataclass(frozen=True, slots=True)
class OwnSiteLabel:
    label: str  # may name the brand: {name}
    path: str  # appended to one of the brand's hosts


@dataclass(frozen=True, slots=True)
class Site:
    """A third-party site cited in reference blocks (phrases_*.yaml explains the URL fields)."""

    labels: Texts
    url: str
    alt_url: str | None = None
    url_share: float = 1.0
    compare_url: str | None = None


@dataclass(frozen=True, slots=True)
class Category:
    keywords: Texts
    zh: str
    en: str
    en_plural: str
    slug: str
    consumer: bool
    competitors: Texts = ()  # real untracked names an answer may list (categories.yaml)


@dataclass(frozen=True, slots=True)
class CommonTexts:
    errors: Texts
    empty_texts: Texts
    emojis: Texts
    own_site_paths: Texts
    last_resort_filler: str


@dataclass(frozen=True, slots=True)
class Phrases:
    """Every text of one answer language (phrases_zh.yaml / phrases_en.yaml say where each goes)."""

    language: str
    business: Pool
    consumer: Pool
    title: Texts
    intro: Texts
    intro_aside: Texts
    table_intro: Texts
    prose_intro: Texts
    name_separators: Texts
    description: Texts
    description_extra: Texts
    description_extra_con: Texts
    sub_bullets: Texts
    sub_bullets_other_brand: Texts
    table_layouts: tuple[TableLayout, ...]
    price_cells: Texts
    rating_cells: Texts
    table_comparison: Texts
    table_disclaimer: Texts
    prose_list_sentence: Texts
    prose_first_item: Texts
    prose_item: Texts
    advise_against: Texts
    advise_against_lead: Texts
    advise_against_inline: Texts
    weak_points: Texts
    summary_prefixes: Texts
    summary_two_names: Texts
    summary_one_name: Texts
    summary_no_name: Texts
    own_url_sentences: Texts
    comparison_url_sentences: Texts
    closing: Texts
    think: Texts
    think_aside: Texts
    think_unnamed: str
    reference_headings: Texts
    own_site_labels: tuple[OwnSiteLabel, ...]
    own_site_labels_generic: tuple[OwnSiteLabel, ...]
    list_and: str
    list_comma: str
    sentence_gap: str
    colon: str
    full_stop: str
    fillers: Texts  # made-up products, then the generic labels
    generic_fillers: frozenset[str]  # labels that read as list items only ("其他厂商")
    traps_anywhere: Texts
    traps_item: Texts
    refusals: Texts
    off_topic: Texts
    sites: tuple[Site, ...]


def _load(name: str) -> dict:
    data_dir = files(__package__.rpartition(".")[0]) / "data"
    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    return yaml.load((data_dir / name).read_text(encoding="utf-8"), Loader=loader)


def _frozen(value):
    return tuple(value) if isinstance(value, list) else value


@cache
def phrases(language: str) -> Phrases:
    """The texts of answers in ``language`` ("zh" or "en")."""
    data = _load(f"phrases_{language}.yaml")
    pools, fillers, traps = data.pop("pools"), data.pop("fillers"), data.pop("traps")
    return Phrases(
        language=language,
        business=Pool(**{k: tuple(v) for k, v in pools["business"].items()}),
        consumer=Pool(**{k: tuple(v) for k, v in pools["consumer"].items()}),
        table_layouts=tuple(TableLayout(t["header"], t["rule"], tuple(t["columns"]))
                            for t in data.pop("table_layouts")),
        own_site_labels=tuple(OwnSiteLabel(**e) for e in data.pop("own_site_labels")),
        own_site_labels_generic=tuple(OwnSiteLabel(**e) for e in data.pop("own_site_labels_generic")),
        sites=tuple(Site(**{k: _frozen(v) for k, v in s.items()}) for s in data.pop("sites")),
        fillers=tuple(fillers["products"] + fillers["generic"]),
        generic_fillers=frozenset(fillers["generic"]),
        traps_anywhere=tuple(traps["anywhere"]),
        traps_item=tuple(traps["item"]),
        **{k: _frozen(v) for k, v in data.items()},
    )


@cache
def common_texts() -> CommonTexts:
    return CommonTexts(**{k: _frozen(v) for k, v in _load("common.yaml").items()})


@cache
def categories() -> tuple[tuple[Category, ...], Category]:
    """The answer topics in the order they are tried, and the one for questions none matches."""
    data = _load("categories.yaml")
    listed = tuple(Category(**{k: _frozen(v) for k, v in c.items()}) for c in data["categories"])
    return listed, Category(keywords=(), **data["default"])


@cache
def platform_styles() -> tuple[dict[str, dict], dict[str, str]]:
    """The known platforms' PlatformStyle arguments (base merged with each one's overrides),
    and the other names of those platforms."""
    data = _load("platform_styles.yaml")
    styles = {name: {k: _frozen(v) for k, v in (data["base"] | overrides).items()}
              for name, overrides in data["platforms"].items()}
    return styles, data["aliases"]
