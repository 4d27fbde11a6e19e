"""The YAML configuration: brands, questions and platforms (README, "Configuration").

Loading validates everything before anything else runs, and reports every problem with
its file, line, entry and cause, so a user can fix the whole file in one go.
"""

from __future__ import annotations

import hashlib
import os
import re
import unicodedata
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError

EXAMPLE_CONFIG_DIR = Path(__file__).parent / "example"
CONFIG_DIR_ENV = "VISIBILITY_CONFIG_DIR"

BRANDS_FILE = "brands.yaml"
QUESTIONS_FILE = "questions.yaml"
PLATFORMS_FILE = "platforms.yaml"


class ConfigError(Exception):
    """The configuration cannot be used; the message lists every problem found."""

    def __init__(self, problems: list[str]):
        self.problems = problems
        super().__init__("invalid configuration:\n" + "\n".join(f"  - {p}" for p in problems))


def normalize_alias(alias: str) -> str:
    """The form two aliases are compared in: NFKC and case-folded, as the analyzer matches."""
    return unicodedata.normalize("NFKC", alias).casefold().strip()


# --- entry schemas: unknown keys are errors, types are checked -------------------------

class _Entry(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, str_strip_whitespace=True)


class Brand(_Entry):
    name: str = Field(min_length=1)
    category: str = Field(min_length=1)
    aliases: tuple[str, ...] = Field(min_length=1)
    exclude_contexts: tuple[str, ...] = ()
    domains: tuple[str, ...] = ()


class Question(_Entry):
    id: str = Field(min_length=1)
    text: str = Field(min_length=1)
    category: str = Field(min_length=1)
    scene: str = "RECOMMEND"
    priority: int = 0


PLATFORM_NAME = re.compile(r"^[a-z0-9][a-z0-9_-]*$")


class Platform(_Entry):
    name: str = Field(pattern=PLATFORM_NAME.pattern)
    base_url: str = Field(pattern=r"^https?://\S+$")
    model: str = Field(min_length=1)
    api_key_env: str | None = None
    rate_limit_rps: float = Field(default=5.0, gt=0)
    max_concurrency: int = Field(default=8, ge=1)
    timeout_s: float = Field(default=60.0, gt=0)
    rounds: int = Field(default=3, ge=1)

    def api_key(self) -> str | None:
        """The key from the environment; raises MissingApiKey when the platform needs one."""
        if not self.api_key_env:
            return None
        key = os.environ.get(self.api_key_env, "").strip()
        if not key:
            raise MissingApiKey(self.name, self.api_key_env)
        return key


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
    version: str  # content hash of brands.yaml: changes exactly when the catalog changes
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

    @property
    def brands(self) -> tuple[Brand, ...]:
        return self.catalog.brands

    def platform(self, name: str) -> Platform:
        for p in self.platforms:
            if p.name == name:
                return p
        known = ", ".join(p.name for p in self.platforms)
        raise UnknownPlatform(f"unknown platform {name!r} (known: {known})")

    @property
    def platform_names(self) -> list[str]:
        return [p.name for p in self.platforms]


# --- reading ---------------------------------------------------------------------------

def resolve_config_dir(directory: str | os.PathLike | None = None) -> Path:
    chosen = directory or os.environ.get(CONFIG_DIR_ENV) or EXAMPLE_CONFIG_DIR
    return Path(chosen).expanduser().resolve()


def load_config(directory: str | os.PathLike | None = None) -> VisibilityConfig:
    root = resolve_config_dir(directory)
    if not root.is_dir():
        raise ConfigError([f"{root}: config directory does not exist"])
    problems: list[str] = []
    catalog = _load_catalog(root / BRANDS_FILE, problems)
    questions = _load_entries(root / QUESTIONS_FILE, "questions", Question, problems)
    platforms = _load_entries(root / PLATFORMS_FILE, "platforms", Platform, problems)
    _check_unique(QUESTIONS_FILE, questions, lambda q: q.id, "question id", problems)
    _check_unique(PLATFORMS_FILE, platforms, lambda p: p.name, "platform name", problems)
    categories = set(catalog.categories) if catalog else set()
    for line, q in questions:
        if catalog and q.category not in categories:
            problems.append(
                f"{QUESTIONS_FILE} line {line}: question {q.id!r}: unknown category {q.category!r}"
                f" (brands.yaml defines: {', '.join(sorted(categories)) or 'none'})"
            )
    if problems:
        raise ConfigError(problems)
    assert catalog is not None
    return VisibilityConfig(
        directory=root,
        catalog=catalog,
        questions=tuple(q for _, q in questions),
        platforms=tuple(p for _, p in platforms),
    )


def load_catalog(path: str | os.PathLike) -> BrandCatalog:
    """Only brands.yaml, as `visibility analyze --catalog` takes it."""
    problems: list[str] = []
    catalog = _load_catalog(Path(path), problems)
    if problems:
        raise ConfigError(problems)
    assert catalog is not None
    return catalog


def _load_catalog(path: Path, problems: list[str]) -> BrandCatalog | None:
    before = len(problems)
    entries = _load_entries(path, "brands", Brand, problems)
    name = path.name
    _check_unique(name, entries, lambda b: (b.category, b.name), "brand name in its category", problems)
    claimed: dict[tuple[str, str], str] = {}
    for line, brand in entries:
        for alias in brand.aliases:
            if not alias.strip():
                problems.append(f"{name} line {line}: brand {brand.name!r}: empty alias")
                continue
            if "\n" in alias or "\r" in alias:
                # Answers are read line by line (lists, the reference block): a name never spans lines.
                problems.append(f"{name} line {line}: brand {brand.name!r}: alias {alias!r} spans lines")
                continue
            key = (brand.category, normalize_alias(alias))
            owner = claimed.setdefault(key, brand.name)
            if owner != brand.name:
                problems.append(
                    f"{name} line {line}: brand {brand.name!r}: alias {alias!r} is already claimed"
                    f" by brand {owner!r} in category {brand.category!r}"
                )
        for context in brand.exclude_contexts:
            if not context.strip():
                problems.append(f"{name} line {line}: brand {brand.name!r}: empty exclude_context")
    if len(problems) > before:
        return None
    version = hashlib.sha256(path.read_bytes()).hexdigest()[:16]
    return BrandCatalog(brands=tuple(b for _, b in entries), version=version, path=path)


def _load_entries(path: Path, key: str, model: type[_Entry], problems: list[str]) -> list[tuple[int, Any]]:
    """Parse one file into (line, entry) pairs, appending a message per bad entry."""
    name = path.name
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        problems.append(f"{path}: file not found")
        return []
    except (OSError, UnicodeDecodeError) as exc:
        problems.append(f"{path}: cannot read: {exc}")
        return []
    try:
        document = yaml.compose(text)
        data = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" line {mark.line + 1}" if mark else ""
        problems.append(f"{name}{where}: not valid YAML: {getattr(exc, 'problem', exc)}")
        return []
    if not isinstance(data, dict) or set(data) != {key}:
        found = ", ".join(map(str, data)) if isinstance(data, dict) else type(data).__name__
        problems.append(f"{name}: expected exactly one top-level key '{key}:' (found: {found})")
        return []
    items = data[key]
    if not isinstance(items, list) or not items:
        problems.append(f"{name}: '{key}' must be a non-empty list")
        return []
    item_nodes = document.value[0][1].value
    entries = []
    for index, (item, node) in enumerate(zip(items, item_nodes)):
        line = node.start_mark.line + 1
        label = _entry_label(key, index, item)
        try:
            entries.append((line, model.model_validate(item)))
        except ValidationError as exc:
            for error in exc.errors():
                problems.append(f"{name} line {line}: {label}: {_describe(error)}")
    return entries


def _entry_label(key: str, index: int, item: Any) -> str:
    ident = None
    if isinstance(item, dict):
        ident = item.get("name") or item.get("id")
    return f"{key}[{index}]" + (f" ({ident})" if ident else "")


def _describe(error: dict) -> str:
    field = ".".join(str(p) for p in error["loc"])
    kind = error["type"]
    if kind == "extra_forbidden":
        return f"unknown key {field!r}"
    if kind == "missing":
        return f"missing key {field!r}"
    if kind == "too_short" and field == "aliases":
        return "aliases must not be empty"
    if kind == "string_too_short":
        return f"{field!r} must not be empty"
    return f"{field!r}: {error['msg']}"


def _check_unique(file: str, entries, key, what: str, problems: list[str]) -> None:
    first_line: dict[Any, int] = {}
    for line, entry in entries:
        ident = key(entry)
        if ident in first_line:
            shown = ident[-1] if isinstance(ident, tuple) else ident
            problems.append(
                f"{file} line {line}: duplicate {what} {shown!r} (first defined at line {first_line[ident]})"
            )
        else:
            first_line[ident] = line
