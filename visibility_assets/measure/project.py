"""The dbt-like SQL project: model files, their kinds, refs, YAML tests and the graph.

A model is `dbt_like_sql/<layer>/<name>.sql`, plain DuckDB SQL whose header declares
`-- kind: view | table | incremental` and `-- grain: col, col`. It reads its inputs only
through `{{ ref('name') }}` (another model or a table written by a Python asset). An
incremental model gets the partitions it builds through `{{ run_partitions }}`, a relation
(date, platform) of every partition of the run, so that a backfill of 540 partitions runs
the model once; `{{ run_rows('name') }}` is another model's rows of those partitions, which the
runner computes once for every model of the step that reads them (or takes from the model
built just before in the same step) instead of each reading them from the lake again.
Partition values are bound, never formatted into the text; so is `$run_id`. `<name>.yml`
beside it holds its tests and a one-line description of each output column. Adding a model is
adding a file.

The tables written by the Python assets are the sources, declared once in
`staging/sources.yml` (each with the asset that writes it); only a staging model refs them.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from pathlib import Path

import yaml

from visibility_assets.config.strict_yaml import safe_load
from visibility_assets.measure.files import PROJECT_DIR, ModelError
from visibility_assets.measure.metric_catalog import Metric, metric_catalog
from visibility_assets.warehouse.db import RUN_PARTITIONS
from visibility_assets.warehouse.tables import TABLES

# ephemeral: no table, no view, no asset; the models that ref it read it as a CTE (dbt's
# ephemeral materialization). The staging layer over the collection tables is ephemeral, so
# that layering the SQL adds no step to a run.
KINDS = ("view", "table", "incremental", "ephemeral")
LEADING_COMMENTS = re.compile(r"^(\s*--[^\n]*\n)*\s*")
WITH = re.compile(r"WITH\s", re.IGNORECASE)
NAME = re.compile(r"^[a-z][a-z0-9_]*$")
REF = re.compile(r"\{\{\s*ref\(\s*'([^']*)'\s*\)\s*\}\}")
RUN_PARTITIONS_REF = re.compile(r"\{\{\s*run_partitions\s*\}\}")
RUN_ROWS = re.compile(r"\{\{\s*run_rows\(\s*'([^']*)'\s*\)\s*\}\}")
RUN_ROWS_PREFIX = "run_rows_"  # the temporary table of a model's rows of the run's partitions
# A share of the metric catalog (metrics.yml) as the columns of a select list: the rate alone, or
# with its Wilson interval (NAME_low, NAME_high); a rate is defined there once, not in each model.
SHARE = re.compile(r"\{\{\s*(share|share_with_interval)\(\s*'([^']*)'\s*\)\s*\}\}")
PARAMETER_FREE = re.compile(r"'[^']*'|--[^\n]*")  # string literals and comments, where a $ means nothing
HEADER = re.compile(r"^--\s*(kind|grain)\s*:\s*(.+?)\s*$", re.MULTILINE)
TEST_KINDS = ("not_null", "unique", "accepted_values", "expression")
SOURCES_FILE = Path("staging") / "sources.yml"
STAGING = "staging"  # the layer that reads the sources


@dataclass(frozen=True)
class ModelTest:
    name: str
    kind: str
    columns: tuple[str, ...] = ()
    values: tuple = ()
    expression: str = ""


@dataclass(frozen=True)
class Source:
    """A table a Python asset writes (warehouse/tables.py declares its columns)."""

    name: str
    asset: str | None  # the asset that writes it; None: a command does (`visibility replay`)
    description: str = ""


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
    columns: dict[str, str] = field(default_factory=dict, hash=False)  # output column -> description
    sources: tuple[str, ...] = ()  # the source tables it reads, itself or through ephemeral models
    ephemerals: tuple[tuple[str, str], ...] = ()  # (name, compiled SQL) of the ephemeral models it reads
    run_reads: tuple[str, ...] = ()  # the models it reads through {{ run_rows('name') }}

    @property
    def partitioned(self) -> bool:
        return self.kind == "incremental"

    def compiled(self, run_rows_tables: bool = False) -> str:
        """The SQL with each ref replaced by the (validated) name it stands for, and the
        ephemeral models it reads, in dependency order, as CTEs of those names. Each run_rows
        is the model's rows filtered to the run's partitions, or, with `run_rows_tables`, the
        temporary table (run_rows_table) the runner has filled with them."""
        def run_rows(match: re.Match) -> str:
            name = match.group(1)
            if run_rows_tables:
                return run_rows_table(name)
            return "(SELECT * FROM " + name + " SEMI JOIN " + RUN_PARTITIONS + " USING (date, platform))"

        sql = RUN_ROWS.sub(run_rows, self.sql)
        sql = REF.sub(lambda m: m.group(1), RUN_PARTITIONS_REF.sub(RUN_PARTITIONS, sql)).strip().rstrip(";")
        if not self.ephemerals:
            return sql
        body = LEADING_COMMENTS.sub("", sql, count=1)
        ctes = ", ".join(name + " AS (" + cte + ")" for name, cte in self.ephemerals)
        if WITH.match(body):
            return "WITH " + ctes + ", " + body[5:]
        return "WITH " + ctes + "\n" + body


def run_rows_table(name: str) -> str:
    """The temporary table of the (validated) model's rows of the run's partitions."""
    return RUN_ROWS_PREFIX + name


@dataclass(frozen=True)
class SqlProject:
    root: Path
    models: dict[str, Model]  # in dependency order
    macros: str
    sources: dict[str, Source]

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
                if self.models[ref].kind != "ephemeral":
                    found.add(ref)
                found.update(self.upstream_assets(self.models[ref]))
            elif self.sources[ref].asset is not None:
                found.add(self.sources[ref].asset)
        return sorted(found)


def load_project(root: Path = PROJECT_DIR) -> SqlProject:
    if not root.is_dir():
        raise ModelError(f"{root}: SQL model folder not found")
    sources = _read_sources(root / SOURCES_FILE)
    models: dict[str, Model] = {}
    documented: dict[str, dict | str] = {}  # each model's `columns:`, as its YAML gives them
    for path in sorted(root.rglob("*.sql")):
        if path.name == "macros.sql":
            continue
        model, documented[path.stem] = _read_model(root, path)
        if model.name in models:
            raise ModelError(f"{path}: model name {model.name!r} is also defined in {models[model.name].path}")
        if model.name in sources:
            raise ModelError(f"{path}: model name {model.name!r} is the name of a table written by an asset")
        models[model.name] = model
    for name, model in models.items():
        for ref in model.refs:
            if ref not in models and ref not in sources:
                raise ModelError(f"{model.path}: ref('{ref}') is neither a model nor a source table"
                                 f" (sources: {', '.join(sorted(sources))})")
            if ref in sources and model.layer != STAGING:
                raise ModelError(f"{model.path}: ref('{ref}') reads a source table; only {STAGING} models read"
                                 f" sources: ref a {STAGING} view of it (a stg_ model selecting the columns needed)")
        models[name] = replace(model, sources=tuple(r for r in model.refs if r in sources),
                               columns=_columns(model, documented))
    order = _topological_order(models)
    for name in order:  # the ephemeral models a model reads, and their sources, reached through them
        models[name] = _with_ephemerals(models[name], models)
    macros_path = root / "macros.sql"
    macros = macros_path.read_text(encoding="utf-8") if macros_path.exists() else ""
    return SqlProject(root, {name: models[name] for name in order}, macros, sources)


def _with_ephemerals(model: Model, models: dict[str, Model]) -> Model:
    """The model with the ephemeral models it reads (theirs first, each once) and their sources;
    the models it refs come before it in `models`' order, so theirs are already resolved."""
    ephemerals: dict[str, str] = {}
    sources = dict.fromkeys(model.sources)
    for ref in model.refs:
        read = models.get(ref)
        if read is not None and read.kind == "ephemeral":
            ephemerals.update(read.ephemerals)
            ephemerals[ref] = REF.sub(lambda m: m.group(1), read.sql).strip().rstrip(";")
            sources.update(dict.fromkeys(read.sources))
    return replace(model, ephemerals=tuple(ephemerals.items()), sources=tuple(sources))


def _with_shares(root: Path, path: Path, sql: str) -> str:
    """The model's {{ share('name') }} and {{ share_with_interval('name') }} written out from the
    catalog's numerator and denominator (identifiers, checked when the catalog was read)."""
    if not SHARE.search(sql):
        return sql
    catalog = {m.name: m for m in metric_catalog(root) if m.kind == "share"}

    def columns(match: re.Match) -> str:
        metric = catalog.get(match.group(2))
        if metric is None:
            raise ModelError(f"{path}: {match.group(0)}: no share of that name in {root / 'metrics.yml'}"
                             f" ({', '.join(catalog)})")
        return _share_columns(metric, interval=match.group(1) == "share_with_interval")

    return SHARE.sub(columns, sql)


def _share_columns(metric: Metric, interval: bool) -> str:
    x, n, name = metric.numerator, metric.denominator, metric.name
    rate = "CASE WHEN " + n + " > 0 THEN " + x + " / " + n + " END AS " + name
    if not interval:
        return rate
    return (rate + ", wilson_low(" + x + ", " + n + ") AS " + name + "_low, wilson_high(" + x + ", " + n + ") AS "
            + name + "_high")


def _read_sources(path: Path) -> dict[str, Source]:
    """staging/sources.yml: `sources:`, a list of {name, asset, description}."""
    data = _read_yaml(path) if path.exists() else None
    if not isinstance(data, dict) or set(data) != {"sources"} or not isinstance(data["sources"], list):
        raise ModelError(f"{path}: expected a mapping with one key 'sources', a list of source tables")
    sources: dict[str, Source] = {}
    for index, entry in enumerate(data["sources"]):
        where = f"{path}: sources[{index}]"
        if not isinstance(entry, dict) or not {"name", "asset"} <= set(entry) <= {"name", "asset", "description"}:
            raise ModelError(f"{where}: expected 'name', 'asset' (null when no asset writes it) and a 'description'")
        name, asset = entry["name"], entry["asset"]
        if not isinstance(name, str) or name not in TABLES:
            raise ModelError(f"{where}: {name!r} is not a table of visibility_assets/warehouse/tables.py")
        if name in sources:
            raise ModelError(f"{where}: source {name!r} is listed twice")
        if asset is not None and not (isinstance(asset, str) and NAME.match(asset)):
            raise ModelError(f"{where}: asset must be an asset name or null")
        sources[name] = Source(name, asset, str(entry.get("description") or ""))
    return sources


def _read_model(root: Path, path: Path) -> tuple[Model, dict | str]:
    name = path.stem
    if not NAME.match(name):
        raise ModelError(f"{path}: a model file name must be lowercase letters, digits and _")
    sql = _with_shares(root, path, path.read_text(encoding="utf-8"))
    header = dict(HEADER.findall(sql))
    kind = header.get("kind")
    if kind not in KINDS:
        raise ModelError(f"{path}: header must declare '-- kind: {'|'.join(KINDS)}' (found {kind!r})")
    grain = tuple(c.strip() for c in header.get("grain", "").split(",") if c.strip())
    if not grain:
        raise ModelError(f"{path}: header must declare '-- grain: column, ...'")
    run_reads = tuple(dict.fromkeys(RUN_ROWS.findall(sql)))
    refs = tuple(dict.fromkeys(REF.findall(sql) + list(run_reads)))
    for ref in refs:
        if not NAME.match(ref):
            raise ModelError(f"{path}: ref('{ref}') is not a valid model name")
    if "{{" in RUN_ROWS.sub("", RUN_PARTITIONS_REF.sub("", REF.sub("", sql))):
        raise ModelError(f"{path}: only {{{{ ref('name') }}}}, {{{{ run_partitions }}}}, {{{{ run_rows('name') }}}},"
                         " {{ share('name') }} and {{ share_with_interval('name') }} may appear between double braces")
    set_based = bool(RUN_PARTITIONS_REF.search(sql) or run_reads)
    if kind == "incremental" and not set_based:
        raise ModelError(f"{path}: an incremental model must select its partitions through"
                         " {{ run_partitions }} (SEMI JOIN {{ run_partitions }} USING (date, platform))"
                         " or {{ run_rows('name') }}")
    if "$date" in sql or "$platform" in sql:
        raise ModelError(f"{path}: a model gets no $date or $platform: an incremental one builds every"
                         " partition of the run at once, through {{ run_partitions }}")
    if kind != "incremental" and set_based:
        raise ModelError(f"{path}: only an incremental model can read {{{{ run_partitions }}}} or"
                         " {{ run_rows('name') }}")
    relative = path.relative_to(root)
    layer = relative.parts[0] if len(relative.parts) > 1 else "models"
    spec = _read_spec(path.with_suffix(".yml"))
    tests = tuple(_read_test(path.with_suffix(".yml"), index, entry)
                  for index, entry in enumerate(spec.get("tests") or []))
    if kind == "ephemeral" and (tests or "$" in PARAMETER_FREE.sub("", sql)):
        raise ModelError(f"{path}: an ephemeral model has no table to test and takes no parameters:"
                         " test the models that read it")
    return Model(name, path, layer, kind, grain, sql, refs, tests, run_reads=run_reads), spec.get("columns") or {}


def _read_yaml(path: Path):
    try:
        return safe_load(path.read_text(encoding="utf-8"))
    except yaml.YAMLError as exc:
        raise ModelError(f"{path}: not valid YAML: {exc}") from None


def _read_spec(path: Path) -> dict:
    """A model's YAML: `tests` (a list), `columns` (each output column -> one line describing
    it, or the name of the model whose columns it selects, documented there)."""
    if not path.exists():
        return {}
    data = _read_yaml(path) or {}
    if not isinstance(data, dict) or set(data) - {"tests", "columns"}:
        raise ModelError(f"{path}: expected a mapping with the keys 'tests' and 'columns'")
    columns = data.get("columns")
    described = isinstance(columns, dict) and all(
        isinstance(c, str) and isinstance(d, str) and d.strip() and "\n" not in d.strip() for c, d in columns.items())
    if columns is not None and not described and not (isinstance(columns, str) and NAME.match(columns)):
        raise ModelError(f"{path}: 'columns' must map each output column to a one-line description,"
                         " or name the model whose columns it selects")
    return data


def _columns(model: Model, documented: dict[str, dict | str]) -> dict[str, str]:
    """The model's column descriptions, or those of the model it names for them."""
    seen = [model.name]
    columns = documented[model.name]
    while isinstance(columns, str):
        if columns not in documented or columns in seen:
            raise ModelError(f"{model.path.with_suffix('.yml')}: columns: {columns!r} is not a model documenting"
                             " its own columns")
        seen.append(columns)
        columns = documented[columns]
    return dict(columns)


def _read_test(path: Path, index: int, entry) -> ModelTest:
    if not isinstance(entry, dict) or len(entry) != 1 or next(iter(entry)) not in TEST_KINDS:
        raise ModelError(f"{path}: tests[{index}] must be one of {', '.join(TEST_KINDS)}")
    kind, spec = next(iter(entry.items()))
    return _test(path, index, kind, spec)


def _test(path: Path, index: int, kind: str, spec) -> ModelTest:
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
