"""The configuration's entries and the loaded config: brands, questions, platforms and prices.

Unknown keys are errors and types are checked (pydantic), so a typo never passes silently.
"""

from __future__ import annotations

import os
import re
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import date, datetime, time
from pathlib import Path
from typing import Any, Literal
from zoneinfo import ZoneInfo

from pydantic import Field, StrictBool, model_validator

from visibility_assets.config.entry import Count, Number, _Entry
from visibility_assets.config.events import EventSettings, Notifications
from visibility_assets.config.judge import JudgeSettings
from visibility_assets.config.retention import RetentionSettings
from visibility_assets.config.urls import EndpointUrl
from visibility_assets.core.chinese_script import to_simplified


class ConfigError(Exception):
    """The configuration cannot be used; the message lists every problem found."""

    def __init__(self, problems: list[str]):
        self.problems = problems
        super().__init__("invalid configuration:\n" + "\n".join(f"  - {p}" for p in problems))


def normalize_alias(alias: str) -> str:
    """The form two aliases are compared in: NFKC, case-folded and Traditional read as
    Simplified, as the analyzer matches (華為 is 华为)."""
    return to_simplified(unicodedata.normalize("NFKC", alias).casefold().strip())


# --- entry schemas: unknown keys are errors, types are checked -------------------------

class Brand(_Entry):
    name: str = Field(min_length=1)
    category: str = Field(min_length=1)
    aliases: tuple[str, ...] = Field(min_length=1)
    exclude_contexts: tuple[str, ...] = ()
    domains: tuple[str, ...] = ()
    own: StrictBool = False  # one of our brands: the workspace opens on the first


BASE_VARIANT = "base"  # the variant label of a question's own text


class Location(_Entry):
    """Where a variant's asker is, for a platform whose search takes a user location."""

    country: str = Field(pattern=r"^[A-Z]{2}$")  # ISO 3166-1 alpha-2: CN, US
    region: str | None = Field(default=None, min_length=1)
    city: str | None = Field(default=None, min_length=1)
    latitude: Number | None = Field(default=None, ge=-90, le=90)
    longitude: Number | None = Field(default=None, ge=-180, le=180)


class Variant(_Entry):
    """A named rephrasing of a question (a persona, a region, a language), asked beside it."""

    name: str = Field(pattern=r"^[A-Za-z0-9][A-Za-z0-9_-]{0,39}$")
    text: str = Field(min_length=1)
    location: Location | None = None

    @model_validator(mode="after")
    def _not_the_base(self) -> Variant:
        if self.name == BASE_VARIANT:
            raise ValueError(f"variant name {BASE_VARIANT!r} is the question's own text")
        return self


@dataclass(frozen=True)
class AskedForm:
    """One way a question is asked: its own text (variant None) or one of its variants."""

    variant: str | None
    text: str
    location: Location | None = None


class Question(_Entry):
    id: str = Field(min_length=1)
    text: str = Field(min_length=1)
    category: str = Field(min_length=1)
    scene: str = "RECOMMEND"
    priority: Count = Field(default=0, ge=-1000, le=1000)  # higher is collected first
    # Relative demand (a search volume the user knows, say): the weighted metrics count it.
    weight: Number = Field(default=1.0, gt=0, le=1e12)
    variants: tuple[Variant, ...] = ()

    @model_validator(mode="after")
    def _variants_named_once(self) -> Question:
        names = [v.name for v in self.variants]
        twice = sorted({n for n in names if names.count(n) > 1})
        if twice:
            raise ValueError(f"variant {twice[0]!r} is named twice")
        return self

    def forms(self) -> tuple[AskedForm, ...]:
        """The question's own text, then each variant: every form is collected on its own keys."""
        return (AskedForm(None, self.text),) + tuple(AskedForm(v.name, v.text, v.location) for v in self.variants)


CANARY = "canary"  # the category of the canary prompts: never a brand category
# Answers are analysed up to this many characters (the rest is stored, flagged, not read): the
# matching and list rules grow faster than the text, and no assistant answers a question in more.
# A setting of the visibility_config resource (config/resource.py).
MAX_ANSWER_CHARS = 100_000


class Canary(_Entry):
    """A brand-agnostic prompt asked every night to notice a platform's model change."""

    id: str = Field(min_length=1)
    text: str = Field(min_length=1)

    def as_question(self) -> Question:
        return Question(id=self.id, text=self.text, category=CANARY, scene="CANARY", priority=0)


PLATFORM_NAME = re.compile(r"^[a-z0-9][a-z0-9_-]*$")
# How each platform is asked and read: one adapter per dialect (collect/dialects/).
# The one list of dialects: the collector (collect/dialects/) and the simulator
# (tools/simulator/dialects/) each hold a module per name.
DIALECTS = ("openai", "deepseek", "qwen", "ernie", "hunyuan", "doubao", "kimi", "perplexity")
Dialect = Literal[DIALECTS]


class Platform(_Entry):
    name: str = Field(pattern=PLATFORM_NAME.pattern)
    base_url: EndpointUrl
    model: str = Field(min_length=1)
    api_key_env: str | None = None
    rate_limit_rps: Number = Field(default=5.0, gt=0, le=1000)
    max_concurrency: Count = Field(default=8, ge=1, le=1000)
    timeout_s: Number = Field(default=60.0, ge=0.1, le=3600)
    rounds: Count = Field(default=3, ge=1, le=100)
    dialect: Dialect = "openai"
    web_search: StrictBool = False  # ask with the platform's own web search switched on
    thinking: Literal["enabled", "disabled"] | None = None  # None: the platform's default, nothing sent
    extra_body: dict[str, Any] = Field(default_factory=dict)  # merged into every request body
    max_cost_per_day: Number | None = Field(default=None, gt=0, le=1e9)  # in the price table's currency
    # The daily budget of extra sampling (events.yaml): requests beyond the nightly plan, and
    # their cost in the price table's currency (None: no cost cap).
    extra_requests_per_day: Count = Field(default=100, ge=0, le=1_000_000)
    extra_cost_per_day: Number | None = Field(default=None, ge=0, le=1e9)

    def api_key(self) -> str | None:
        """The key from the environment; raises MissingApiKey when the platform needs one."""
        if not self.api_key_env:
            return None
        key = os.environ.get(self.api_key_env, "").strip()
        if not key:
            raise MissingApiKey(self.name, self.api_key_env)
        return key


DOMAIN_CLASSES = ("encyclopedia", "qa_community", "news", "ecommerce", "government", "other")


class DomainClass(_Entry):
    """What kind of source a cited domain is (and its subdomains)."""

    domain: str = Field(pattern=r"^[a-z0-9-]+(\.[a-z0-9-]+)*$")
    kind: Literal["encyclopedia", "qa_community", "news", "ecommerce", "government", "other"] = Field(alias="class")


class PeakWindow(_Entry):
    """A time of day when the platform charges differently (e.g. an off-peak discount)."""

    start: time
    end: time  # may be earlier than start: the window runs past midnight
    timezone: str = "Asia/Shanghai"
    multiplier: Number = Field(gt=0, le=100)  # applied to every price of the entry inside the window

    @model_validator(mode="after")
    def _known_timezone(self) -> PeakWindow:
        try:
            ZoneInfo(self.timezone)
        except (KeyError, ValueError):
            raise ValueError(f"unknown timezone {self.timezone!r}") from None
        return self

    def covers(self, moment: datetime) -> bool:
        clock = moment.astimezone(ZoneInfo(self.timezone)).time()
        if self.start <= self.end:
            return self.start <= clock < self.end
        return clock >= self.start or clock < self.end


class Price(_Entry):
    """What one platform's model costs from a date on, per million tokens and per search."""

    platform: str = Field(min_length=1)
    model: str = Field(min_length=1)
    currency: str = Field(pattern=r"^[A-Z]{3}$")
    effective_from: date
    effective_to: date | None = None  # last day it applies; None: until a later entry starts
    input_per_mtok: Number = Field(ge=0, le=1e6)
    cached_input_per_mtok: Number | None = Field(default=None, ge=0, le=1e6)  # None: cached input costs as input
    output_per_mtok: Number = Field(ge=0, le=1e6)
    per_search: Number = Field(default=0.0, ge=0, le=1e4)
    windows: tuple[PeakWindow, ...] = ()

    def multiplier_at(self, moment: datetime) -> float:
        return next((w.multiplier for w in self.windows if w.covers(moment)), 1.0)


class UnknownPlatform(Exception):
    pass


class MissingApiKey(Exception):
    def __init__(self, platform: str, env_var: str):
        self.platform, self.env_var = platform, env_var
        super().__init__(
            f"platform {platform!r} needs an API key: set the environment variable {env_var}"
        )


@dataclass(frozen=True)
class BrandCatalog:
    brands: tuple[Brand, ...]
    version: str  # hash of what the analyzer reads of the brands (config/loading.py, catalog_version)
    path: Path

    def for_category(self, category: str) -> tuple[Brand, ...]:
        return tuple(b for b in self.brands if b.category == category)

    @property
    def categories(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(b.category for b in self.brands))


@dataclass(frozen=True)
class VisibilityConfig:
    directory: Path
    catalog: BrandCatalog
    questions: tuple[Question, ...]
    platforms: tuple[Platform, ...]
    prices: tuple[Price, ...] = ()
    domains: tuple[DomainClass, ...] = ()  # the built-in table, then domains.yaml's entries
    canaries: tuple[Canary, ...] = ()  # canaries.yaml: asked with the nightly questions
    events: EventSettings = field(default_factory=EventSettings)
    notifications: Notifications = field(default_factory=Notifications)
    version: str = ""  # the hash of every config file (config/loading.py, config_version)
    judge: JudgeSettings | None = None  # judge.yaml: None, no judge (the lexicon's labels only)
    retention: RetentionSettings = field(default_factory=RetentionSettings)  # retention.yaml

    @property
    def brands(self) -> tuple[Brand, ...]:
        return self.catalog.brands

    def questions_of(self, category: str | None = None, ids: Sequence[str] | None = None) -> tuple[Question, ...]:
        """The questions of a category, or with these ids (in the file's order)."""
        return tuple(q for q in self.questions
                     if (category is None or q.category == category) and (ids is None or q.id in ids))

    @property
    def question_weights(self) -> dict[str, float]:
        return {q.id: q.weight for q in self.questions}

    def platform(self, name: str) -> Platform:
        for p in self.platforms:
            if p.name == name:
                return p
        known = ", ".join(p.name for p in self.platforms)
        raise UnknownPlatform(f"unknown platform {name!r} (known: {known})")

    @property
    def platform_names(self) -> list[str]:
        return [p.name for p in self.platforms]

    def price(self, platform: str, model: str, day: date) -> Price | None:
        """The price entry in force on `day`: the latest one that started on or before it."""
        entries = [p for p in self.prices if p.platform == platform and p.model == model
                   and p.effective_from <= day and (p.effective_to is None or day <= p.effective_to)]
        return max(entries, key=lambda p: p.effective_from, default=None)


