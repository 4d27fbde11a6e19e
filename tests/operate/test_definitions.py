"""The code location loads as `dagster dev -w workspace.yaml` would load it."""

import os
from datetime import date

import pytest
from dagster import MultiPartitionsDefinition

from tests.pipeline import pipeline
from visibility_assets.config import load_config
from visibility_assets.core.partitions import Partition, partition_key, partition_tags, run_partitions


def test_definitions_load_with_the_raw_asset_partitioned_by_day_and_platform():
    defs = pipeline()
    raw = defs.resolve_assets_def("raw_ai_responses")
    assert raw.op.retry_policy is not None
    partitions = raw.partitions_def
    assert isinstance(partitions, MultiPartitionsDefinition)
    dims = {d.name: d.partitions_def for d in partitions.partitions_defs}
    assert dims["date"].timezone == "Asia/Shanghai"
    assert dims["platform"].get_partition_keys() == load_config().platform_names


def test_partition_keys_and_tags():
    assert Partition.of("2026-11-01|deepseek") == Partition(date(2026, 11, 1), "deepseek")
    assert Partition.of(partition_key("2026-11-01", "qwen")) == (date(2026, 11, 1), "qwen")
    assert Partition.of("2026-11-01|qwen").day == "2026-11-01"
    keys = ["2026-11-02|qwen", "2026-11-01|qwen", "2026-11-01|deepseek", "2026-11-01|qwen"]
    assert run_partitions(keys) == [(date(2026, 11, 1), "deepseek"), (date(2026, 11, 1), "qwen"),
                                    (date(2026, 11, 2), "qwen")]
    tags = partition_tags("2026-11-01", "qwen")
    assert tags["dagster/partition/date"] == "2026-11-01"
    assert tags["dagster/partition/platform"] == "qwen"
    partitions = pipeline().resolve_assets_def("raw_ai_responses").partitions_def
    assert tags == dict(partitions.get_tags_for_partition_key("2026-11-01|qwen"))


def test_workspace_file_points_at_the_definitions_module():
    from pathlib import Path

    import yaml

    workspace = yaml.safe_load((Path(__file__).parents[2] / "workspace.yaml").read_text())
    assert workspace["load_from"][0]["python_module"]["module_name"] == "visibility_assets.definitions"


@pytest.mark.system
def test_dagster_cli_validates_the_workspace():
    """What `dagster dev -w workspace.yaml` loads, checked by Dagster's own loader."""
    import subprocess
    import sys
    from pathlib import Path

    root = Path(__file__).parents[2]
    result = subprocess.run([sys.executable, "-m", "dagster", "definitions", "validate", "-w", "workspace.yaml"],
                            cwd=root, capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr[-2000:]
    assert "All code locations passed validation" in result.stderr + result.stdout


def test_asset_events_are_written_in_batches_by_run_workers_and_by_commands(monkeypatch, tmp_path):
    """Without the batch size a 90-day backfill on PostgreSQL storage takes minutes, not seconds."""
    from visibility_assets.definitions import defs
    from visibility_assets.operate.instance import EVENT_BATCH_SIZE_ENV, get_instance

    monkeypatch.delenv(EVENT_BATCH_SIZE_ENV, raising=False)
    defs()  # what the code server and every run worker load
    assert os.environ[EVENT_BATCH_SIZE_ENV] == "1000"
    monkeypatch.delenv(EVENT_BATCH_SIZE_ENV)
    monkeypatch.setenv("DAGSTER_HOME", str(tmp_path))
    get_instance()  # what the commands run their runs on
    assert os.environ[EVENT_BATCH_SIZE_ENV] == "1000"
