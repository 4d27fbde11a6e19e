"""A selection a user can make in the UI runs in order, even without the models in between."""

import pytest
from dagster import DagsterInstance, materialize

from tests.pipeline import pipeline, read_warehouse
from visibility_assets.core.partitions import partition_key, partition_tags

pytestmark = pytest.mark.dagster

DAY = "2026-11-14"


def test_the_partitioned_assets_without_the_staging_views_run_after_the_samples_they_read(
        visibility_home, config_dir, simulated):
    """Dagster orders steps only along declared dependencies: the marts declare every asset
    they read through the staging views, so leaving the views out cannot reorder them."""
    repository = pipeline().get_repository_def()
    assets = list({id(a): a for a in repository.assets_defs_by_key.values()}.values())
    selection = [key for key, asset in repository.assets_defs_by_key.items()
                 if asset.partitions_def is not None and not key.path[-1].startswith("stg_")]
    assert {"raw_ai_responses", "cleaned_samples", "int_brand_daily"} <= {k.path[-1] for k in selection}

    result = materialize(assets, selection=selection, partition_key=partition_key(DAY, "qwen"),
                         instance=DagsterInstance.ephemeral(), tags=partition_tags(DAY, "qwen"))

    assert result.success
    with read_warehouse() as conn:
        samples = conn.execute("SELECT count(*) FROM cleaned_samples WHERE date = ? AND platform = 'qwen'",
                               [DAY]).fetchone()[0]
        metrics = conn.execute("SELECT count(*), sum(valid_answers) FROM fct_mention_metrics WHERE date = ?"
                               " AND platform = 'qwen'", [DAY]).fetchone()
    assert samples == 24 and metrics[0] > 0 and metrics[1] > 0


def test_a_mart_whose_input_table_was_never_built_refuses_naming_it(visibility_home, config_dir):
    repository = pipeline().get_repository_def()
    assets = list({id(a): a for a in repository.assets_defs_by_key.values()}.values())
    mart = next(k for k in repository.assets_defs_by_key if k.path[-1] == "fct_mention_metrics")

    result = materialize(assets, selection=[mart], partition_key=partition_key(DAY, "qwen"),
                         instance=DagsterInstance.ephemeral(), tags=partition_tags(DAY, "qwen"), raise_on_error=False)

    assert not result.success
    message = str(result.get_step_failure_events()[0].event_specific_data.error.to_string())
    assert "fct_mention_metrics reads int_brand_daily, never built in this warehouse" in message
