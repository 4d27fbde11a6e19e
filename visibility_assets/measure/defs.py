"""Measure: every SQL model of dbt_like_sql/ becomes a Dagster asset, every YAML test an asset
check on it (the runner: project.py and runner.py beside it).

The incremental models, partitioned by day and platform, are one multi-asset: one step and
two lake transactions for all of them, where a step each cost 28 transactions, each opening
the lake, and most of a night's SQL time on a busy lake. Each model keeps its own asset, its
lineage and its checks, and the UI can still materialize any one of them (the step builds
the selected models, in dependency order). The views and tables, which are not partitioned,
are a second multi-asset (SQL_VIEWS_STEP), each asset tagged with its kind: a view is only a
definition, made or replaced by the runner wherever a model reads it and its definition
changed, so the nightly and re-analysis jobs leave the view assets (and their tests) to the
after-night job, where a step each cost Dagster's step overhead a dozen times a night.
"""

from dagster import (
    AssetCheckKey,
    AssetCheckResult,
    AssetCheckSeverity,
    AssetCheckSpec,
    AssetExecutionContext,
    AssetKey,
    AssetSpec,
    BackfillPolicy,
    Failure,
    MaterializeResult,
    MultiPartitionsDefinition,
    multi_asset,
)

from visibility_assets.core.partitions import run_partitions
from visibility_assets.measure.project import Model, SqlProject, load_project
from visibility_assets.measure.runner import ModelBuild, UpstreamMissing, materialize_models
from visibility_assets.warehouse.resource import WarehouseResource

MODEL_KIND_TAG = "visibility/model_kind"  # the tag the jobs select view assets by
INCREMENTAL_MODELS = "incremental_models"  # the one step of the partitioned models
SQL_VIEWS_STEP = "sql_views"  # the one step of the views and tables


def _check_specs(model: Model) -> list[AssetCheckSpec]:
    return [
        AssetCheckSpec(name=test.name, asset=model.name, description=f"{test.kind}: "
                       + (test.expression or ", ".join(test.columns) + (f" in {list(test.values)}" if test.values else "")))
        for test in model.tests
    ]


def _description(project: SqlProject, model: Model) -> str:
    return f"{model.kind} model {model.path.relative_to(project.root)}; grain: {', '.join(model.grain)}"


def _results(model: Model, built: ModelBuild, partitions: int, checks_wanted=lambda key: True):
    yield MaterializeResult(asset_key=model.name, metadata={
        "rows_written": built.rows, "kind": model.kind, "partitions": partitions, "lake_snapshot_id": built.snapshot})
    for test in model.tests:
        if checks_wanted(AssetCheckKey(AssetKey(model.name), test.name)):
            yield AssetCheckResult(
                asset_key=model.name, check_name=test.name, passed=built.failing[test.name] == 0,
                severity=AssetCheckSeverity.ERROR, metadata={"failing_rows": built.failing[test.name]},
            )


def _materialize(warehouse: WarehouseResource, project: SqlProject, models: list[Model], partition_keys,
                 run_id: str) -> dict[str, ModelBuild]:
    try:
        return materialize_models(warehouse, project, models, run_partitions(partition_keys), run_id)
    except UpstreamMissing as exc:
        raise Failure(description=str(exc), allow_retries=False) from None


def _model_spec(project: SqlProject, model: Model) -> AssetSpec:
    return AssetSpec(model.name, deps=project.upstream_assets(model), group_name=model.layer, kinds={"duckdb", "sql"},
                     tags={MODEL_KIND_TAG: model.kind}, description=_description(project, model), skippable=True)


def build_models_step(project: SqlProject, models: list[Model], name: str,
                      partitions_def: MultiPartitionsDefinition | None = None):
    """`models` as one multi-asset: any subset of them built in one step, in dependency order
    (the partitioned ones for the run's partitions)."""

    @multi_asset(
        name=name,
        specs=[_model_spec(project, model) for model in models],
        check_specs=[spec for model in models for spec in _check_specs(model)],
        partitions_def=partitions_def,
        backfill_policy=BackfillPolicy.single_run() if partitions_def else None,
        can_subset=True,
    )
    def _models(context: AssetExecutionContext, warehouse: WarehouseResource):
        selected = [model for model in models if AssetKey(model.name) in context.selected_asset_keys]
        keys = context.partition_keys if partitions_def else []
        built = _materialize(warehouse, project, selected, keys, context.run_id)
        checks = context.selected_asset_check_keys
        for model in selected:
            yield from _results(model, built[model.name], len(keys), checks.__contains__)

    return _models


def build_sql_assets(partitions_def: MultiPartitionsDefinition, project: SqlProject | None = None) -> list:
    project = project or load_project()
    models = [model for model in project.models.values() if model.kind != "ephemeral"]
    partitioned = [model for model in models if model.partitioned]
    unpartitioned = [model for model in models if not model.partitioned]
    return [*([build_models_step(project, unpartitioned, SQL_VIEWS_STEP)] if unpartitioned else []),
            *([build_models_step(project, partitioned, INCREMENTAL_MODELS, partitions_def)] if partitioned else [])]
