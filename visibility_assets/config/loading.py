"""Reading the config folder: every problem found, each with its file, line, entry and cause,
before anything else runs, so a user can fix the whole file in one go."""

from __future__ import annotations

import hashlib
import json
import os
import re
from pathlib import Path
from typing import Any

import yaml
from pydantic import ValidationError

from visibility_assets.config.entry import _Entry
from visibility_assets.config.events import EventsFile
from visibility_assets.config.judge import JUDGE_PROMPT_VERSIONS, JudgeFile, JudgeSettings
from visibility_assets.config.retention import RetentionFile
from visibility_assets.config.schema import (
    Brand,
    BrandCatalog,
    Canary,
    ConfigError,
    DomainClass,
    Platform,
    Price,
    Question,
    VisibilityConfig,
    normalize_alias,
)
from visibility_assets.config.strict_yaml import DuplicateKey, compose_and_load

EXAMPLE_CONFIG_DIR = Path(__file__).parent / "example"
CONFIG_DIR_ENV = "VISIBILITY_CONFIG_DIR"

BRANDS_FILE = "brands.yaml"
QUESTIONS_FILE = "questions.yaml"
PLATFORMS_FILE = "platforms.yaml"
PRICES_FILE = "prices.yaml"  # optional: without it costs are null
EVENTS_FILE = "events.yaml"  # optional: event-driven collection and alert webhooks
CANARIES_FILE = "canaries.yaml"  # optional: brand-agnostic prompts for the model-change canary
DOMAINS_FILE = "domains.yaml"  # optional: classes of cited domains, over the built-in table
JUDGE_FILE = "judge.yaml"  # optional: a model that labels brand sentiment and role (config/judge.py)
RETENTION_FILE = "retention.yaml"  # optional: how long the raw evidence is kept (config/retention.py)
BUILT_IN_DOMAINS = Path(__file__).parent / "domain_classes.yaml"
CONFIG_FILES = (BRANDS_FILE, QUESTIONS_FILE, PLATFORMS_FILE, PRICES_FILE, EVENTS_FILE, CANARIES_FILE, DOMAINS_FILE,
                JUDGE_FILE, RETENTION_FILE)

# The last config loaded from each folder, with the hash of its files: the assets, schedules and
# sensors (two of them ticking every 30 to 60 s) load the config again and again, and only a
# change to a file is worth parsing and validating the YAML again.
_LOADED: dict[Path, tuple[str, VisibilityConfig]] = {}


# --- reading ---------------------------------------------------------------------------

def resolve_config_dir(directory: str | os.PathLike | None = None) -> Path:
    chosen = directory or os.environ.get(CONFIG_DIR_ENV) or EXAMPLE_CONFIG_DIR
    return Path(chosen).expanduser().resolve()


def config_version(root: Path) -> str:
    """The hash of every config file (an optional file that is absent counts as empty) and of the
    built-in domain table: a change to any of them is a new version of the config."""
    digest = hashlib.sha256()
    for path in (*(root / name for name in CONFIG_FILES), BUILT_IN_DOMAINS):
        content = path.read_bytes() if path.is_file() else b""
        digest.update(path.name.encode() + b"\0" + str(len(content)).encode() + b"\0" + content)
    return digest.hexdigest()[:16]


def load_config(directory: str | os.PathLike | None = None) -> VisibilityConfig:
    """The config of the folder (the example when none is named), validated; loaded again only
    when a file changed since the last load of that folder."""
    root = resolve_config_dir(directory)
    if not root.is_dir():
        raise ConfigError([f"{root}: config directory does not exist"])
    version = config_version(root)
    loaded = _LOADED.get(root)
    if loaded is None or loaded[0] != version:
        loaded = _LOADED[root] = (version, _read_config(root, version))
    return loaded[1]


def _read_config(root: Path, version: str) -> VisibilityConfig:
    problems: list[str] = []
    catalog = _load_catalog(root / BRANDS_FILE, problems)
    questions = _load_entries(root / QUESTIONS_FILE, "questions", Question, problems)
    before = len(problems)
    platforms = _load_entries(root / PLATFORMS_FILE, "platforms", Platform, problems)
    platforms_complete = len(problems) == before  # else prices of a broken entry are no news
    _check_unique(QUESTIONS_FILE, questions, lambda q: q.id, "question id", problems)
    _check_unique(PLATFORMS_FILE, platforms, lambda p: p.name, "platform name", problems)
    categories = set(catalog.categories) if catalog else set()
    for line, q in questions:
        if catalog and q.category not in categories:
            problems.append(
                f"{QUESTIONS_FILE} line {line}: question {q.id!r}: unknown category {q.category!r}"
                f" (brands.yaml defines: {', '.join(sorted(categories)) or 'none'})"
            )
    prices = _load_prices(root / PRICES_FILE, {p.name for _, p in platforms} if platforms_complete else set(),
                          problems)
    events = _load_document(root / EVENTS_FILE, EventsFile, problems)
    domains = _load_domains(root / DOMAINS_FILE, problems)
    canaries = _load_entries(root / CANARIES_FILE, "canaries", Canary, problems) if (root / CANARIES_FILE).exists() else []
    _check_unique(CANARIES_FILE, canaries, lambda c: c.id, "canary id", problems)
    question_ids = {q.id for _, q in questions}
    for line, canary in canaries:
        if canary.id in question_ids:
            problems.append(f"{CANARIES_FILE} line {line}: canary id {canary.id!r} is also a question id")
    judge = _load_judge(root / JUDGE_FILE, {p.name for _, p in platforms} if platforms_complete else set(), problems)
    retention = _load_document(root / RETENTION_FILE, RetentionFile, problems).retention
    if problems:
        raise ConfigError(problems)
    assert catalog is not None
    return VisibilityConfig(
        directory=root,
        version=version,
        catalog=catalog,
        questions=tuple(q for _, q in questions),
        platforms=tuple(p for _, p in platforms),
        prices=tuple(p for _, p in prices),
        domains=domains,
        canaries=tuple(c for _, c in canaries),
        events=events.events,
        notifications=events.notifications,
        judge=judge,
        retention=retention,
    )


def _load_judge(path: Path, platform_names: set[str], problems: list[str]) -> JudgeSettings | None:
    judge = _load_document(path, JudgeFile, problems).judge
    if judge is None:
        return None
    if platform_names and judge.platform not in platform_names:
        problems.append(f"{JUDGE_FILE}: judge.platform {judge.platform!r} is not a platform of {PLATFORMS_FILE}"
                        f" (it defines: {', '.join(sorted(platform_names))})")
    if judge.prompt_version not in JUDGE_PROMPT_VERSIONS:
        problems.append(f"{JUDGE_FILE}: judge.prompt_version {judge.prompt_version!r} is unknown"
                        f" (known: {', '.join(JUDGE_PROMPT_VERSIONS)})")
    return judge


def _load_prices(path: Path, platform_names: set[str], problems: list[str]) -> list[tuple[int, Price]]:
    """The optional price table: each entry names a configured platform, and two entries of one
    platform and model never apply on the same day."""
    if not path.exists():
        return []
    entries = _load_entries(path, "prices", Price, problems)
    for line, price in entries:
        if platform_names and price.platform not in platform_names:
            problems.append(f"{PRICES_FILE} line {line}: price for unknown platform {price.platform!r}"
                            f" (platforms.yaml defines: {', '.join(sorted(platform_names))})")
        if price.effective_to is not None and price.effective_to < price.effective_from:
            problems.append(f"{PRICES_FILE} line {line}: effective_to {price.effective_to} is before"
                            f" effective_from {price.effective_from}")
    _check_unique(PRICES_FILE, entries, lambda p: (p.platform, p.model, p.effective_from),
                  "price start for this platform and model", problems)
    return entries


def _load_domains(path: Path, problems: list[str]) -> tuple[DomainClass, ...]:
    """The built-in domain table with the config's domains.yaml over it (a domain listed in both
    takes the config's class)."""
    by_domain = {d.domain: d for _, d in _load_entries(BUILT_IN_DOMAINS, "domains", DomainClass, problems)}
    if path.exists():
        entries = _load_entries(path, "domains", DomainClass, problems)
        _check_unique(DOMAINS_FILE, entries, lambda d: d.domain, "domain", problems)
        by_domain.update({d.domain: d for _, d in entries})
    return tuple(by_domain.values())


def _load_document(path: Path, model: type[_Entry], problems: list[str]) -> Any:
    """An optional file whose top level is one mapping of sections; absent, every default."""
    if not path.exists():
        return model()
    parsed = _parse_yaml(path, problems)
    if parsed is None:
        return model()
    document, data = parsed
    if data is None:
        return model()
    if not isinstance(data, dict):
        problems.append(f"{path.name}: expected a mapping of sections ({', '.join(model.model_fields)})")
        return model()
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        for error in exc.errors():
            problems.append(f"{path.name} line {_line_of(document, error['loc'])}: {_describe(error)}")
        return model()


def _line_of(node: yaml.Node, loc: tuple) -> int:
    """The line of the deepest node on a validation error's path that the document has."""
    line = node.start_mark.line + 1
    for part in loc:
        if isinstance(node, yaml.MappingNode):
            node = next((v for k, v in node.value if k.value == str(part)), None)
        elif isinstance(node, yaml.SequenceNode) and isinstance(part, int) and part < len(node.value):
            node = node.value[part]
        else:
            node = None
        if node is None:
            break
        line = node.start_mark.line + 1
    return line


def _parse_yaml(path: Path, problems: list[str]) -> tuple[yaml.Node, Any] | None:
    """The composed document (for line numbers) and its data; None after recording why not."""
    name = path.name
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        problems.append(f"{path}: file not found")
        return None
    except (OSError, UnicodeDecodeError) as exc:
        problems.append(f"{path}: cannot read: {exc}")
        return None
    try:
        parsed = compose_and_load(text)
    except DuplicateKey as exc:
        problems.append(f"{name} line {exc.problem_mark.line + 1}: {exc.problem}")
        return None
    except yaml.reader.ReaderError as exc:  # a character YAML does not allow in a file: no marks
        line = text.count("\n", 0, exc.position) + 1
        problems.append(f"{name} line {line}: not valid YAML: the control character U+{exc.character:04X}"
                        " is not allowed in a config file")
        return None
    except yaml.YAMLError as exc:
        mark = _error_mark(exc)
        where = f" line {mark.line + 1}" if mark else ""
        context = (f" ({exc.context} that starts here)" if mark is not None and mark is getattr(exc, "context_mark", None)
                   else "")
        problems.append(f"{name}{where}: not valid YAML: {getattr(exc, 'problem', None) or exc}{context}")
        return None
    before = len(problems)
    _refuse_control_characters(name, parsed[0], problems)
    return parsed if len(problems) == before else None


# Written as escapes in a quoted string ("a\x01b", "\0"), YAML lets any character into a value;
# a NUL or another control character in a name reaches the lake's file lists and the pages.
# Tabs and line breaks stay allowed (a question may span lines).
CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]")


def _refuse_control_characters(name: str, node: yaml.Node | None, problems: list[str]) -> None:
    """A problem for each value (or key) holding a control character, with its line."""
    if isinstance(node, yaml.ScalarNode):
        found = CONTROL.search(node.value) if isinstance(node.value, str) else None
        if found:
            problems.append(f"{name} line {node.start_mark.line + 1}: the value {node.value!r} holds the control"
                            f" character U+{ord(found.group()):04X}, which no config value may hold")
    elif isinstance(node, yaml.SequenceNode):
        for item in node.value:
            _refuse_control_characters(name, item, problems)
    elif isinstance(node, yaml.MappingNode):
        for key, value in node.value:
            _refuse_control_characters(name, key, problems)
            _refuse_control_characters(name, value, problems)


def _error_mark(exc: yaml.YAMLError) -> yaml.Mark | None:
    """Where the mistake is. A token or bracket that never ends ("while scanning a simple key",
    an unclosed quote or [) is found only on a later line: its start is the line to fix."""
    context = getattr(exc, "context", None) or ""
    if context.startswith(("while scanning", "while parsing a flow")) and getattr(exc, "context_mark", None):
        return exc.context_mark
    return getattr(exc, "problem_mark", None)


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
    brands = tuple(b for _, b in entries)
    return BrandCatalog(brands=brands, version=catalog_version(brands), path=path)


def catalog_version(brands) -> str:
    """The hash of what the analyzer reads of the brands (names, categories, aliases, exclusion
    contexts, domains): it changes exactly when the cleaned samples would. Comments, order of
    keys and `own` are not part of it, so marking a brand as ours re-analyses nothing."""
    content = [[b.name, b.category, list(b.aliases), list(b.exclude_contexts), list(b.domains)] for b in brands]
    return hashlib.sha256(json.dumps(content, ensure_ascii=False).encode()).hexdigest()[:16]


def _load_entries(path: Path, key: str, model: type[_Entry], problems: list[str]) -> list[tuple[int, Any]]:
    """Parse one file into (line, entry) pairs, appending a message per bad entry."""
    name = path.name
    parsed = _parse_yaml(path, problems)
    if parsed is None:
        return []
    document, data = parsed
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
                problems.append(f"{name} line {_line_of(node, error['loc'])}: {label}: {_describe(error)}")
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
    return f"{field!r}: {error['msg'].removeprefix('Value error, ')}"


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
