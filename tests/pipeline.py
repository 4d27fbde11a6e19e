"""The pipeline as the tests build it: from the config that $VISIBILITY_CONFIG_DIR names
(the `config_dir` fixture sets it), exactly as the code location builds it."""

from __future__ import annotations

from contextlib import contextmanager

from dagster import (
    AssetSelection,
    DagsterInstance,
    Definitions,
    ExecuteInProcessResult,
    MultiPartitionsDefinition,
    RetryPolicy,
    materialize,
)

from visibility_assets.collect.defs import COLLECT_RETRY_POLICY, build_raw_ai_responses
from visibility_assets.config import load_config
from visibility_assets.core.partitions import daily_platform_partitions, partition_key, partition_tags
from visibility_assets.definitions import build_definitions, build_resources
from visibility_assets.measure.partition_figures import partition_figures_of
from visibility_assets.measure.project import load_project
from visibility_assets.warehouse.lake import lake_settings, reading, write_with_retry


def pipeline(collect_retry_policy: RetryPolicy = COLLECT_RETRY_POLICY) -> Definitions:
    return build_definitions(load_config(), collect_retry_policy)


def resources() -> dict:
    return build_resources(load_config())


def partitions() -> MultiPartitionsDefinition:
    return daily_platform_partitions(load_config().platform_names)


def raw_asset(retry_policy: RetryPolicy = COLLECT_RETRY_POLICY):
    return build_raw_ai_responses(partitions(), partition_figures_of(load_project()), retry_policy)


def materialize_for(names: list[str], day: str, platform: str, instance: DagsterInstance | None = None,
                    defs: Definitions | None = None, **kwargs) -> ExecuteInProcessResult:
    """One partition's run of the named assets and every asset they read, as the nightly job
    runs them (the code location's assets, with its resources, and the run's tags), leaving out
    what the test does not look at."""
    defs = defs or pipeline()
    graph = defs.resolve_asset_graph()
    selection = AssetSelection.assets(*names).upstream().resolve(graph)
    assets = list({id(a): a for a in defs.get_repository_def().assets_defs_by_key.values()}.values())
    return materialize(assets, selection=[key for key in selection if graph.get(key).is_materializable],
                       partition_key=partition_key(day, platform), tags=partition_tags(day, platform),
                       instance=instance or DagsterInstance.ephemeral(), raise_on_error=False, **kwargs)


@contextmanager
def read_warehouse():
    """The warehouse of the current data directory, read-only, as a user's client reads it."""
    with reading(lake_settings()) as conn:
        yield conn


def write_warehouse(work):
    """`work(conn)` in one warehouse transaction, as a writer other than the pipeline would."""
    return write_with_retry(lake_settings(), work)[0]
