"""The dbt-like SQL project: model files, their kinds, refs, YAML tests and the graph.

A model is `dbt_like_sql/<layer>/<name>.sql`, plain DuckDB SQL whose header declares
`-- kind: view | table | incremental` and `-- grain: col, col`. It reads its inputs only
through `{{ ref('name') }}` (another model or a table written by a Python asset). An
incremental model gets the partitions it builds in one of two ways:

- `{{ run_partitions }}`: a relation (date, platform) of every partition of the run, so
  that a backfill of 540 partitions runs the model once (set-based; the shipped models);
- the named parameters `$date` and `$platform`: the model is run once per partition.

Either way partition values are bound as parameters, never formatted into the text;
`$run_id` is bound too. Tests live in `<name>.yml` beside it. Adding a model is adding a file.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

import yaml

from visibility_assets.warehouse.db import RUN_PARTITIONS

PROJECT_DIR = Path(__file__).parent / "dbt_like_sql"  # a link to the top-level dbt_like_sql/
KINDS = ("view", "table", "incremental")
NAME = re.compile(r"^[a-z][a-z0-9_]*$")
REF = re.compile(r"\{\{\s*ref\(\s*'([^']*)'\s*\)\s*\}\}")
RUN_PARTITIONS_REF = re.compile(r"\{\{\s*run_partitions\s*\}\}")
HEADER = re.compile(r"^--\s*(kind|grain)\s*:\s*(.+?)\s*$", re.M)
TEST_KINDS = ("not_null", "unique", "accepted_values", "expression")

# Tables written by the Python assets, and the asset that writes each (None: a command writes it,
# `visibility replay`, outside the asset graph).
SOURCES = {
    "raw_ai_responses": "raw_ai_responses",
    "collection_requests": "raw_ai_responses",
    "http_attempts": "raw_ai_responses",
    "collection_runs": "raw_ai_responses",
    "collection_tasks": "raw_ai_responses",  # planned by collection_task_sensor, collected by the asset
    "analyzer_replays": None,
    "brand_catalog": "brand_catalog",
    "cleaned_samples": "cleaned_samples",
    "sample_brand_results": "cleaned_samples",
    "entity_matches": "cleaned_samples",
    "sample_state_history": "cleaned_samples",
    "sample_quarantine": "cleaned_samples",
    "sample_citations": "cleaned_samples",
}


class ModelError(Exception):
    """The SQL project cannot be loaded; the message names the file."""


@dataclass(frozen=True)
class ModelTest:
    name: str
    kind: str
    columns: tuple[str, ...] = ()
    values: tuple = ()
    expression: str = ""


@dataclass(frozen=True)
class Model:
    name: str
    path: Path
    layer: str
    kind: str
    grain: tuple[str, ...]
    sql: str
    refs: tuple[str, ...]
    tests: tuple[ModelTest, ...]

    @property
    def partitioned(self) -> bool:
        return self.kind == "incremental"

    @property
    def set_based(self) -> bool:
        """Builds all of a run's partitions in one statement, through {{ run_partitions }}."""
        return bool(RUN_PARTITIONS_REF.search(self.sql))

    def compiled(self) -> str:
        """The SQL with each ref replaced by the (validated) table name it stands for."""
        sql = RUN_PARTITIONS_REF.sub(RUN_PARTITIONS, self.sql)
        return REF.sub(lambda m: m.group(1), sql).strip().rstrip(";")


@dataclass(frozen=True)
class SqlProject:
    root: Path
    models: dict[str, Model]  # in dependency order
    macros: str

    def reading(self, name: str) -> list[str]:
        """A model and every asset it reads: the deps of an asset that reads the model."""
        return sorted({name, *self.upstream_assets(self.models[name])})

    def upstream_assets(self, model: Model) -> list[str]:
        """Every asset the model reads, directly or through other models. Dagster orders a run's
        steps only along declared dependencies: a selection that left out the models in between
        (the stg_ views) ran the marts before the samples they read, and reported success."""
        found: set[str] = set()
        for ref in model.refs:
            if ref in self.models:
                found.add(ref)
                found.update(self.upstream_assets(self.models[ref]))
            elif SOURCES[ref] is not None:
                found.add(SOURCES[ref])
        return sorted(found)


def load_project(root: Path = PROJECT_DIR) -> SqlProject:
    if not root.is_dir():
        raise ModelError(f"{root}: SQL model folder not found")
    models: dict[str, Model] = {}
    for path in sorted(root.rglob("*.sql")):
        if path.name == "macros.sql":
            continue
        model = _read_model(root, path)
        if model.name in models:
            raise ModelError(f"{path}: model name {model.name!r} is also defined in {models[model.name].path}")
        if model.name in SOURCES:
            raise ModelError(f"{path}: model name {model.name!r} is the name of a table written by an asset")
        models[model.name] = model
    for model in models.values():
        for ref in model.refs:
            if ref not in models and ref not in SOURCES:
                raise ModelError(f"{model.path}: ref('{ref}') is neither a model nor a source table"
                                 f" (sources: {', '.join(sorted(SOURCES))})")
    macros_path = root / "macros.sql"
    macros = macros_path.read_text(encoding="utf-8") if macros_path.exists() else ""
    return SqlProject(root, {name: models[name] for name in _topological_order(models)}, macros)


def _read_model(root: Path, path: Path) -> Model:
    name = path.stem
    if not NAME.match(name):
        raise ModelError(f"{path}: a model file name must be lowercase letters, digits and _")
    sql = path.read_text(encoding="utf-8")
    header = dict(HEADER.findall(sql))
    kind = header.get("kind")
    if kind not in KINDS:
        raise ModelError(f"{path}: header must declare '-- kind: view|table|incremental' (found {kind!r})")
    grain = tuple(c.strip() for c in header.get("grain", "").split(",") if c.strip())
    if not grain:
        raise ModelError(f"{path}: header must declare '-- grain: column, ...'")
    refs = tuple(dict.fromkeys(REF.findall(sql)))
    for ref in refs:
        if not NAME.match(ref):
            raise ModelError(f"{path}: ref('{ref}') is not a valid model name")
    if "{{" in RUN_PARTITIONS_REF.sub("", REF.sub("", sql)):
        raise ModelError(f"{path}: only {{{{ ref('name') }}}} and {{{{ run_partitions }}}} may appear"
                         " between double braces")
    set_based = bool(RUN_PARTITIONS_REF.search(sql))
    per_partition = "$date" in sql and "$platform" in sql
    if kind == "incremental" and not (set_based or per_partition):
        raise ModelError(f"{path}: an incremental model must select its partitions through"
                         " {{ run_partitions }} or filter on $date and $platform")
    if set_based and ("$date" in sql or "$platform" in sql):
        raise ModelError(f"{path}: a model reading {{{{ run_partitions }}}} gets no $date or $platform"
                         " (it builds every partition of the run at once)")
    if kind != "incremental" and set_based:
        raise ModelError(f"{path}: only an incremental model can read {{{{ run_partitions }}}}")
    relative = path.relative_to(root)
    layer = relative.parts[0] if len(relative.parts) > 1 else "models"
    return Model(name, path, layer, kind, grain, sql, refs, _read_tests(path.with_suffix(".yml"), name))


def _read_tests(path: Path, model: str) -> tuple[ModelTest, ...]:
    if not path.exists():
        return ()
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
    except yaml.YAMLError as exc:
        raise ModelError(f"{path}: not valid YAML: {exc}") from None
    if not isinstance(data, dict) or set(data) - {"tests"}:
        raise ModelError(f"{path}: expected a mapping with one key 'tests'")
    tests = []
    for index, entry in enumerate(data.get("tests") or []):
        if not isinstance(entry, dict) or len(entry) != 1 or next(iter(entry)) not in TEST_KINDS:
            raise ModelError(f"{path}: tests[{index}] must be one of {', '.join(TEST_KINDS)}")
        kind, spec = next(iter(entry.items()))
        tests.append(_test(path, index, model, kind, spec))
    return tuple(tests)


def _test(path: Path, index: int, model: str, kind: str, spec) -> ModelTest:
    where = f"{path}: tests[{index}] ({kind})"
    if kind in ("not_null", "unique"):
        columns = tuple(spec) if isinstance(spec, list) else ()
        if not columns or not all(isinstance(c, str) and NAME.match(c) for c in columns):
            raise ModelError(f"{where}: expected a list of column names")
        return ModelTest(f"{kind}_{'_'.join(columns)}"[:60], kind, columns)
    if kind == "accepted_values":
        if not isinstance(spec, dict) or not NAME.match(str(spec.get("column", ""))) or not spec.get("values"):
            raise ModelError(f"{where}: expected 'column' and a non-empty 'values' list")
        return ModelTest(f"accepted_values_{spec['column']}", kind, (spec["column"],), tuple(spec["values"]))
    if not isinstance(spec, str) or not spec.strip() or ";" in spec:
        raise ModelError(f"{where}: expected one SQL boolean expression")
    return ModelTest(f"expression_{index}", kind, expression=spec)


def _topological_order(models: dict[str, Model]) -> list[str]:
    order, state = [], {}

    def visit(name: str, trail: list[str]) -> None:
        if state.get(name) == "done":
            return
        if state.get(name) == "visiting":
            cycle = trail[trail.index(name):] + [name]
            files = ", ".join(str(models[n].path.name) for n in cycle[:-1])
            raise ModelError(f"ref() cycle: {' -> '.join(cycle)} (files: {files})")
        state[name] = "visiting"
        for ref in models[name].refs:
            if ref in models:
                visit(ref, trail + [name])
        state[name] = "done"
        order.append(name)

    for name in sorted(models):
        visit(name, [])
    return order
