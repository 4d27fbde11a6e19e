"""YAML read the way a config file is meant: a key given twice is an error, and scalars resolve
as YAML 1.2 does (`yes`, `on` and `22:00` stay strings, `1e3` is a number), so a value is never
silently read as something its writer did not mean (`rounds: yes` as 1)."""

from __future__ import annotations

import re
from typing import Any

import yaml


class DuplicateKey(yaml.constructor.ConstructorError):
    pass


class StrictLoader(yaml.SafeLoader):
    """SafeLoader with YAML 1.2 core-schema scalars and no duplicate keys."""

    yaml_implicit_resolvers: dict = {}

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
    loader = StrictLoader(text)
    try:
        node = loader.get_single_node()
        return node, (loader.construct_document(node) if node is not None else None)
    finally:
        loader.dispose()
