"""Measure: every SQL model of dbt_like_sql/ becomes a Dagster asset, every YAML test an asset
check on it (the runner: project.py and runner.py beside it)."""

from dagster import (
    AssetCheckResult,
    AssetCheckSeverity,
    AssetCheckSpec,
    AssetExecutionContext,
    AssetKey,
    BackfillPolicy,
    Failure,
    MaterializeResult,
    MultiPartitionsDefinition,
    asset,
)

from visibility_assets.core.partitions import run_partitions
from visibility_assets.measure.project import Model, SqlProject, load_project
from visibility_assets.measure.runner import UpstreamMissing, materialize_model
from visibility_assets.warehouse.resource import WarehouseResource


def build_model_asset(project: SqlProject, model: Model, partitions_def: MultiPartitionsDefinition):
    check_specs = [
        AssetCheckSpec(name=test.name, asset=model.name, description=f"{test.kind}: "
                       + (test.expression or ", ".join(test.columns) + (f" in {list(test.values)}" if test.values else "")))
        for test in model.tests
    ]

    @asset(
        name=model.name,
        deps=[AssetKey(name) for name in project.upstream_assets(model)],
        partitions_def=partitions_def if model.partitioned else None,
        backfill_policy=BackfillPolicy.single_run() if model.partitioned else None,
        check_specs=check_specs,
        group_name=model.layer,
        kinds={"duckdb", "sql"},
        description=f"{model.kind} model {model.path.relative_to(project.root)}; grain: {', '.join(model.grain)}",
    )
    def _model_asset(context: AssetExecutionContext, warehouse: WarehouseResource):
        partitions = run_partitions(context.partition_keys) if model.partitioned else []
        try:
            built = materialize_model(warehouse, project, model, partitions, context.run_id)
        except UpstreamMissing as exc:
            raise Failure(description=str(exc), allow_retries=False) from None
        yield MaterializeResult(metadata={"rows_written": built.rows, "kind": model.kind,
                                          "partitions": len(partitions), "lake_snapshot_id": built.snapshot})
        for test in model.tests:
            yield AssetCheckResult(
                check_name=test.name, passed=built.failing[test.name] == 0, severity=AssetCheckSeverity.ERROR,
                metadata={"failing_rows": built.failing[test.name]},
            )

    return _model_asset


def build_sql_assets(partitions_def: MultiPartitionsDefinition, project: SqlProject | None = None) -> list:
    project = project or load_project()
    return [build_model_asset(project, model, partitions_def) for model in project.models.values()
            if model.kind != "ephemeral"]
