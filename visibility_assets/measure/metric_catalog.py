"""The metric catalog (dbt_like_sql/metrics.yml): each figure the consumers show, declared once
with its label, its kind and, for a share, the count columns of mention_metrics it pools. The
workspace's overview builds its SQL from it and the report its charts; a new share is one entry."""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import yaml

from visibility_assets.measure.files import PROJECT_DIR, ModelError

CATALOG_FILE = "metrics.yml"
KINDS = ("share", "mean")
IDENTIFIER = re.compile(r"^[a-z_][a-z0-9_]*$")  # names and columns enter SQL text: checked here


@dataclass(frozen=True)
class Metric:
    name: str
    label: str
    kind: str  # share: numerator / denominator with a Wilson interval; mean: the average list rank
    description: str
    numerator: str | None = None  # a count column of mention_metrics (shares)
    denominator: str | None = None


@cache
def metric_catalog(root: Path = PROJECT_DIR) -> tuple[Metric, ...]:
    path = root / CATALOG_FILE
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    if not isinstance(data, dict) or not isinstance(data.get("metrics"), list):
        raise ModelError(f"{path}: expected a mapping with a list 'metrics'")
    metrics = tuple(_metric(path, index, entry) for index, entry in enumerate(data["metrics"]))
    names = [m.name for m in metrics]
    if len(set(names)) != len(names):
        raise ModelError(f"{path}: a metric name appears twice")
    return metrics


def _metric(path: Path, index: int, entry) -> Metric:
    where = f"{path}: metrics[{index}]"
    if not isinstance(entry, dict):
        raise ModelError(f"{where}: expected a mapping")
    metric = Metric(name=str(entry.get("name", "")), label=str(entry.get("label", "")), kind=str(entry.get("kind", "")),
                    description=str(entry.get("description", "")), numerator=entry.get("numerator"),
                    denominator=entry.get("denominator"))
    if metric.kind not in KINDS:
        raise ModelError(f"{where}: kind must be one of {', '.join(KINDS)} (found {metric.kind!r})")
    columns = (metric.numerator, metric.denominator) if metric.kind == "share" else ()
    for value in (metric.name, *columns):
        if not isinstance(value, str) or not IDENTIFIER.match(value):
            raise ModelError(f"{where}: {value!r} is not a column or metric name (lower case, digits, _)")
    if not metric.label:
        raise ModelError(f"{where}: a label is needed")
    return metric


def shares() -> tuple[Metric, ...]:
    return tuple(m for m in metric_catalog() if m.kind == "share")


def share(name: str) -> Metric:
    """A share of the catalog by name; a name that is none is a KeyError naming those there are."""
    found = next((m for m in shares() if m.name == name), None)
    if found is None:
        raise KeyError(f"{name!r} is not a share of the metric catalog ({', '.join(m.name for m in shares())})")
    return found


def labels() -> dict[str, str]:
    return {m.name: m.label for m in metric_catalog()}
