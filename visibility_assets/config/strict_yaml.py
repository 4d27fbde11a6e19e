"""YAML read the way a config file is meant: a key given twice is an error, and scalars resolve
as YAML 1.2 does (`yes`, `on` and `22:00` stay strings, `1e3` is a number), so a value is never
silently read as something its writer did not mean (`rounds: yes` as 1)."""

from __future__ import annotations

import re
from typing import Any

import yaml


class DuplicateKey(yaml.constructor.ConstructorError):
    pass


class _NoDuplicateKeys:
    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict:
        seen: dict[Any, yaml.Node] = {}
        for key_node, _ in node.value:
            key = self.construct_object(key_node, deep=True)
            if isinstance(key, (str, int, float, bool)) and key in seen:
                raise DuplicateKey(
                    None, None,
                    f"duplicate key {key!r} (first given at line {seen[key].start_mark.line + 1})",
                    key_node.start_mark)
            seen[key] = key_node
        return super().construct_mapping(node, deep=deep)


class StrictLoader(_NoDuplicateKeys, yaml.SafeLoader):
    """SafeLoader with YAML 1.2 core-schema scalars and no duplicate keys."""

    yaml_implicit_resolvers: dict = {}


# libyaml's parser, where PyYAML has it (its wheels do), reads a config ~6x faster: every command
# and every run's worker pays that at its start. Its error messages are worded and placed
# differently, so a document it refuses is read again by the Python parser for the error.
_C_SAFE_LOADER = getattr(yaml, "CSafeLoader", None)


class _FastStrictLoader(_NoDuplicateKeys, _C_SAFE_LOADER or yaml.SafeLoader):
    yaml_implicit_resolvers = StrictLoader.yaml_implicit_resolvers  # one dict: the resolvers below


def _resolve(tag: str, pattern: str, first: str) -> None:
    StrictLoader.add_implicit_resolver(tag, re.compile(pattern, re.X), list(first))


# The YAML 1.2 core schema (https://yaml.org/spec/1.2.2/#1032-tag-resolution).
StrictLoader.add_implicit_resolver("tag:yaml.org,2002:null", re.compile(r"^(?:~|null|Null|NULL|)$"),
                                   ["~", "n", "N", ""])
_resolve("tag:yaml.org,2002:bool", r"^(?:true|True|TRUE|false|False|FALSE)$", "tTfF")
_resolve("tag:yaml.org,2002:int", r"^[-+]?[0-9]+$", "-+0123456789")
_resolve("tag:yaml.org,2002:float",
         r"""^(?:[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)(?:[eE][-+]?[0-9]+)?
         |[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN))$""", "-+.0123456789")
# Dates stay what YAML 1.1 made them (prices.yaml's effective_from: 2026-01-01 is a date).
_resolve("tag:yaml.org,2002:timestamp", r"^[0-9]{4}-[0-9]{2}-[0-9]{2}$", "0123456789")


def compose_and_load(text: str) -> tuple[yaml.Node | None, Any]:
    """The document's node tree (for line numbers) and its data, from one parse."""
    try:
        return _compose_and_load(_FastStrictLoader, text)
    except DuplicateKey:
        raise
    except yaml.YAMLError:
        return _compose_and_load(StrictLoader, text)  # raises the Python parser's error


def _compose_and_load(loader_class, text: str) -> tuple[yaml.Node | None, Any]:
    loader = loader_class(text)
    try:
        node = loader.get_single_node()
        return node, (loader.construct_document(node) if node is not None else None)
    finally:
        loader.dispose()


def safe_load(text: str) -> Any:
    """yaml.safe_load, with libyaml's parser where there is one (and the Python parser's errors)."""
    if _C_SAFE_LOADER is not None:
        try:
            return yaml.load(text, Loader=_C_SAFE_LOADER)
        except yaml.YAMLError:
            pass
    return yaml.safe_load(text)
