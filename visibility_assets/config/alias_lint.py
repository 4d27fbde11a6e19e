"""Aliases that would match too much, told when a command loads the config: a warning, not an
error (the operator may mean it), naming brands.yaml's line.

Three kinds: an alias that is one of its language's commonest words (`the`, `one`, `可以`: it
matches in every answer), by wordfreq's frequency lists; a single Chinese character (`云` is
inside 云朵, 云南 and every cloud vendor's name); and an alias that is the name or an alias of a
brand of another category (阿里云 under a phone brand counts the cloud's mentions as the phone's).
"""

from __future__ import annotations

import math
import re
import unicodedata
from collections.abc import Iterator
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import yaml

from visibility_assets.config.strict_yaml import compose_and_load

# wordfreq's Zipf scale: 5.5 and above are about the 300 commonest words of English or Chinese
# ("the" 7.7, "one" 6.5, "go" 6.0); brand words below it are common enough (苹果 5.0, Apple 4.8)
# and left to the analyzer's context rules.
COMMON_WORD_ZIPF = 5.5
HAN = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]")


@dataclass(frozen=True)
class AliasWarning:
    line: int
    brand: str
    alias: str
    why: str

    def __str__(self) -> str:
        return f"brands.yaml line {self.line}: brand {self.brand!r}: the alias {self.alias!r} {self.why}"


def alias_warnings(directory: Path) -> list[AliasWarning]:
    """The warnings for the brands.yaml of a config folder that has loaded without errors."""
    path = Path(directory) / "brands.yaml"
    node, _ = compose_and_load(path.read_text(encoding="utf-8"))
    entries = list(_aliases(node))
    names: dict[str, set[str]] = {}  # a folded name or alias -> the categories whose brands it names
    for _, category, _, alias in entries:
        names.setdefault(_fold(alias), set()).add(category)
    warnings = []
    for line, category, brand, alias in entries:
        why = _why(alias, category, names)
        if why:
            warnings.append(AliasWarning(line, brand, alias, why))
    return warnings


def _why(alias: str, category: str, names: dict[str, set[str]]) -> str | None:
    folded = _fold(alias)
    if len(folded) == 1 and HAN.match(folded):
        return "is a single Chinese character: it matches inside many words"
    others = sorted(names.get(folded, set()) - {category})
    if others:
        return (f"names a brand of the categor{'ies' if len(others) > 1 else 'y'} {', '.join(others)} too:"
                f" its mentions there would count here")
    language = "zh" if HAN.search(folded) else "en"
    zipf = zipf_frequency(folded, language)
    if zipf >= COMMON_WORD_ZIPF:
        return (f"is one of the commonest words of {'Chinese' if language == 'zh' else 'English'}"
                f" (Zipf frequency {zipf:.1f}): it would match in most answers")
    return None


def _aliases(node: yaml.Node | None) -> Iterator[tuple[int, str, str, str]]:
    """(line, category, brand name, alias) for the name and each alias of every brand."""
    brands = _value(node, "brands")
    for brand in brands.value if isinstance(brands, yaml.SequenceNode) else []:
        name, category, aliases = (_value(brand, key) for key in ("name", "category", "aliases"))
        if not isinstance(name, yaml.ScalarNode) or not isinstance(category, yaml.ScalarNode):
            continue
        yield name.start_mark.line + 1, category.value, name.value, name.value
        for alias in aliases.value if isinstance(aliases, yaml.SequenceNode) else []:
            if isinstance(alias, yaml.ScalarNode) and _fold(alias.value) != _fold(name.value):
                yield alias.start_mark.line + 1, category.value, name.value, alias.value


def _value(node: yaml.Node | None, key: str) -> yaml.Node | None:
    if not isinstance(node, yaml.MappingNode):
        return None
    return next((value for name, value in node.value if name.value == key), None)


def _fold(text: str) -> str:
    """As the matcher compares: NFKC, case-folded, outer spaces gone."""
    return unicodedata.normalize("NFKC", text).casefold().strip()


def zipf_frequency(word: str, language: str) -> float:
    """The word's Zipf frequency (log10 of its count per billion words), 0 for an unknown one."""
    frequency = _frequencies(language).get(word)
    return math.log10(frequency * 1e9) if frequency else 0.0


@cache
def _frequencies(language: str) -> dict[str, float]:
    from wordfreq import get_frequency_dict  # ~0.1 s to load a list: only when warnings are asked for

    return get_frequency_dict(language, wordlist="small")
