"""The SQL models on an in-memory DuckDB: given rows of the source tables, the rows a model
writes, built with the real runner (create_macros, build_model) in dependency order.

    warehouse = Warehouse()
    warehouse.insert("cleaned_samples", [sample("k1"), sample("k2", valid=False, invalid_reason="refusal")])
    rows = warehouse.build("fct_invalid_answers", [Partition(DAY, "deepseek")])

Each source row is given as a dict of the columns that matter; the table's other required
columns get a fixed default (row()). No lake, no Dagster: a test runs in milliseconds.
"""

from __future__ import annotations

import math
import shutil
from collections.abc import Iterable, Sequence
from datetime import UTC, date, datetime
from functools import cache
from pathlib import Path

import duckdb
import pyarrow as pa

from visibility_assets.core.partitions import Partition
from visibility_assets.measure.model_tests import failing_rows
from visibility_assets.measure.project import PROJECT_DIR, SqlProject, load_project
from visibility_assets.measure.runner import build_model, create_macros
from visibility_assets.warehouse.db import ensure_table, insert_batch
from visibility_assets.warehouse.tables import TABLES

DAY = date(2026, 11, 10)
NOON = datetime(2026, 11, 10, 12, 0, tzinfo=UTC)
RUN_ID = "unit-run"
Z95 = 1.959963984540054


@cache
def shipped_project() -> SqlProject:
    return load_project()


def _default(field: pa.Field):
    if pa.types.is_string(field.type):
        return field.name
    if pa.types.is_integer(field.type):
        return 1
    if pa.types.is_floating(field.type):
        return 0.0
    if pa.types.is_boolean(field.type):
        return False
    if pa.types.is_date(field.type):
        return DAY
    if pa.types.is_timestamp(field.type):
        return NOON
    if pa.types.is_list(field.type):
        return []
    raise TypeError(f"no default for {field}")


def row(table: str, **values) -> dict:
    """A row of the source table: the values given, a default for each other required column."""
    unknown = set(values) - set(TABLES[table].columns)
    if unknown:
        raise KeyError(f"{table} has no column {sorted(unknown)}")
    return {f.name: values[f.name] if f.name in values else _default(f)
            for f in TABLES[table].fields if f.name in values or not f.nullable}


class Warehouse:
    """An in-memory DuckDB holding source tables and the models built over them."""

    def __init__(self, project: SqlProject | None = None):
        self.project = project or shipped_project()
        self.conn = duckdb.connect(config={"threads": 1})  # tiny tables: threads only cost
        self.built: list[str] = []
        self.pending: dict[str, list[dict]] = {}
        create_macros(self.conn, self.project)

    def insert(self, table: str, rows: Iterable[dict]) -> Warehouse:
        """Add rows to a source table (written in one batch per table when a model is next built)."""
        self.pending.setdefault(table, []).extend(row(table, **r) for r in rows)
        return self

    def flush(self) -> None:
        for table, rows in self.pending.items():
            ensure_table(self.conn, TABLES[table])
            insert_batch(self.conn, TABLES[table], TABLES[table].from_dicts(rows))
        self.pending.clear()

    def models_for(self, name: str) -> list[str]:
        """The model and every model it reads, directly or not, in dependency order."""
        needed, todo = set(), [name]
        while todo:
            current = todo.pop()
            if current not in needed:
                needed.add(current)
                todo.extend(r for r in self.project.models[current].refs if r in self.project.models)
        return [m for m in self.project.models if m in needed]

    def build(self, name: str, partitions: Sequence[Partition] = (), run_id: str = RUN_ID,
              order_by: str = "ALL") -> list[dict]:
        """Build the model and what it reads for the partitions; all its rows."""
        self.flush()
        for model in self.models_for(name):
            build_model(self.conn, self.project.models[model], list(partitions), run_id)
            self.built.append(model)
        return self.rows(name, order_by)

    def build_all(self, partitions: Sequence[Partition], run_id: str = RUN_ID) -> Warehouse:
        self.flush()
        for model in self.project.models.values():
            build_model(self.conn, model, list(partitions), run_id)
            self.built.append(model.name)
        return self

    def rows(self, name: str, order_by: str = "ALL", exclude: Sequence[str] = ()) -> list[dict]:
        self.flush()
        columns = [c for c, _ in self.describe(name) if c not in exclude]
        quoted = ", ".join('"' + c + '"' for c in columns)
        # The name is a model's (validated by load_project); nothing else enters the text.
        result = self.conn.execute("SELECT " + quoted + " FROM " + self.relation(name) + " ORDER BY " + order_by)
        return [dict(zip(columns, values)) for values in result.fetchall()]

    def describe(self, name: str) -> list[tuple[str, str]]:
        return [(c, t) for c, t, *_ in self.conn.execute("DESCRIBE SELECT * FROM " + self.relation(name)).fetchall()]

    def relation(self, name: str) -> str:
        """What to select a model's rows from: its table or view, or an ephemeral model's SQL."""
        model = self.project.models.get(name)
        return "(" + model.compiled() + ") AS " + name if model is not None and model.kind == "ephemeral" else name

    def failing_checks(self, partitions: Sequence[Partition]) -> dict[tuple[str, str], int]:
        """Each YAML test of each model built, with how many rows (of the partitions) break it."""
        return {(model.name, test.name): failing_rows(self.conn, model, test, list(partitions))
                for model in self.project.models.values() if model.name in self.built for test in model.tests}


def copy_project(tmp_path: Path) -> Path:
    """A copy of the shipped SQL project to add or break files in."""
    target = tmp_path / "sql"
    shutil.copytree(PROJECT_DIR, target)
    return target


# --- the source rows of the clean stage --------------------------------------------------------

def sample(key: str, day: date = DAY, platform: str = "deepseek", **values) -> dict:
    defaults = {"question_id": "q", "category": "cat", "round": 1, "state": "completed", "valid": True,
                "invalid_reason": None, "citations": [], "has_citation": False, "analyzer_version": "1.0.0",
                "config_version": "cfg1", "run_id": "clean-run"}
    return {"request_key": key, "date": day, "platform": platform, **defaults, **values}


def brand_result(key: str, brand: str, day: date = DAY, platform: str = "deepseek", **values) -> dict:
    defaults = {"category": "cat", "valid": True, "has_citation": False, "mentioned": False}
    out = {"request_key": key, "date": day, "platform": platform, "brand": brand, **defaults, **values}
    out.setdefault("mention_count", int(bool(out["mentioned"])))
    return out


def answers(warehouse: Warehouse, rows, day: date = DAY, platform: str = "deepseek", brands: str = "ABC",
            category: str = "cat") -> list[str]:
    """Cleaned answers as test_metrics wrote them: each (valid, invalid_reason, has_citation,
    {brand: (mentioned, list_rank, recommended, cites_own_domain[, sentiment])}); every brand
    of `brands` gets a row per answer. Returns the request keys."""
    samples, results, keys = [], [], []
    for i, (valid, reason, cited, named) in enumerate(rows):
        key = f"{platform}-{day}-{category}-{i}"
        keys.append(key)
        samples.append(sample(key, day, platform, question_id=f"q{i}", category=category, valid=valid,
                              invalid_reason=reason, brands_mentioned=len(named), has_citation=cited,
                              citations=["https://x.test"] if cited else []))
        for brand in brands:
            mentioned, rank, recommended, own, *sentiment = named.get(brand, (False, None, None, False))
            results.append(brand_result(key, brand, day, platform, category=category, valid=valid, has_citation=cited,
                                        mentioned=mentioned, list_rank=rank, recommended=recommended,
                                        cites_own_domain=own, sentiment=sentiment[0] if sentiment else None))
    warehouse.insert("cleaned_samples", samples).insert("sample_brand_results", results)
    return keys


def named(counts: dict[str, int], total: int = 10):
    """`total` valid answers without citations (answers() rows): answer i names each brand b
    with i < counts[b] (recommended, unranked)."""
    return [(True, None, False, {b: (True, None, True, False) for b, n in counts.items() if i < n})
            for i in range(total)]


def response(key: str, day: date = DAY, platform: str = "deepseek", **values) -> dict:
    """A raw_ai_responses row (an answer as collected)."""
    defaults = {"category": "cat", "answer_text": "An answer.", "outcome": "answered", "response_model": "m1"}
    return {"request_key": key, "date": day, "platform": platform, **defaults, **values}


# --- independent statistics ----------------------------------------------------------------------

def wilson(x: int, n: int, z: float = Z95) -> tuple[float, float]:
    p = x / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return max(0.0, centre - half), min(1.0, centre + half)


def two_proportion(x1: int, n1: int, x0: int, n0: int) -> tuple[float, float]:
    """z (pooled variance) and its two-sided p."""
    pooled = (x1 + x0) / (n1 + n0)
    if pooled in (0, 1):
        return 0.0, 1.0
    z = (x1 / n1 - x0 / n0) / math.sqrt(pooled * (1 - pooled) * (1 / n1 + 1 / n0))
    return z, math.erfc(abs(z) / math.sqrt(2))


def benjamini_hochberg(p_values: Sequence[float]) -> list[float]:
    """The adjusted p of each, in the order given."""
    order = sorted(range(len(p_values)), key=lambda i: p_values[i])
    adjusted, running = [0.0] * len(p_values), 1.0
    for rank in range(len(order), 0, -1):
        index = order[rank - 1]
        running = min(running, p_values[index] * len(p_values) / rank)
        adjusted[index] = running
    return adjusted
