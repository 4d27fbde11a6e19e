"""The shipped instance writes a range run's asset events in batches (operate/instance/event_log.py)
and records exactly what Dagster's own SQLite storage records one event at a time."""

import shutil

import pytest
from dagster import (
    AssetCheckKey,
    AssetCheckResult,
    AssetCheckSpec,
    AssetKey,
    BackfillPolicy,
    DagsterEventType,
    DagsterInstance,
    EventRecordsFilter,
    MaterializeResult,
    StaticPartitionsDefinition,
    asset,
    materialize,
)

from visibility_assets.operate.instance import INSTANCE_YAML, batch_event_writes
from visibility_assets.operate.instance.event_log import BatchedSqliteEventLogStorage

pytestmark = pytest.mark.dagster

DAYS = StaticPartitionsDefinition([f"2026-11-{day:02d}" for day in range(1, 31)])


RATES_BOUNDED = AssetCheckKey(AssetKey("daily_rates"), "rates_bounded")
PLANNED_MID_RUN: dict[str, str | None] = {}  # instance directory -> rates_bounded's status while daily_counts ran


@asset(partitions_def=DAYS, backfill_policy=BackfillPolicy.single_run(),
       check_specs=[AssetCheckSpec("rows_present", asset="daily_counts"),
                    AssetCheckSpec("counts_positive", asset="daily_counts")])
def daily_counts(context):
    # Mid-run, the check of the next asset is planned and not evaluated yet: its planned row shows.
    latest = context.instance.event_log_storage.get_latest_asset_check_execution_by_key([RATES_BOUNDED])
    PLANNED_MID_RUN[context.instance.root_directory] = latest[RATES_BOUNDED].status.value if latest else None
    yield MaterializeResult(metadata={"partitions": len(context.partition_keys)})
    yield AssetCheckResult(check_name="rows_present", passed=True)
    yield AssetCheckResult(check_name="counts_positive", passed=False)


# Dagster sorts a run's planned events by asset key, so planned materializations and planned
# checks alternate in the batch.
@asset(partitions_def=DAYS, backfill_policy=BackfillPolicy.single_run(), deps=[daily_counts],
       check_specs=[AssetCheckSpec("rates_bounded", asset="daily_rates")])
def daily_rates(context):
    yield MaterializeResult(metadata={"partitions": len(context.partition_keys)})
    yield AssetCheckResult(check_name="rates_bounded", passed=True)


ROWS_PRESENT = next(key for key in daily_counts.check_keys if key.name == "rows_present")
CHECKS = sorted([*daily_counts.check_keys, *daily_rates.check_keys], key=lambda key: key.name)


def instance_at(home, yaml_text: str | None, monkeypatch) -> DagsterInstance:
    """The shipped dagster.yaml finds its storage through DAGSTER_HOME, as Dagster finds the instance."""
    home.mkdir(parents=True)
    monkeypatch.setenv("DAGSTER_HOME", str(home))
    if yaml_text is None:
        shutil.copy(INSTANCE_YAML["sqlite"], home / "dagster.yaml")
    else:
        (home / "dagster.yaml").write_text(yaml_text)
    return DagsterInstance.from_config(str(home))


def recorded(instance: DagsterInstance, run_id: str) -> dict:
    keys = [AssetKey("daily_counts"), AssetKey("daily_rates")]
    records = instance.get_event_records(EventRecordsFilter(DagsterEventType.ASSET_MATERIALIZATION))
    return {
        "materialized": {key.to_user_string(): sorted(instance.get_materialized_partitions(key)) for key in keys},
        "latest": {key.to_user_string(): instance.get_latest_materialization_event(key).dagster_event.partition
                   for key in keys},
        "materializations": sorted((r.asset_key.to_user_string(), r.partition_key) for r in records),
        "run_events": sorted(e.dagster_event.event_type_value for e in instance.all_logs(run_id) if e.dagster_event),
        "check": instance.event_log_storage.get_latest_asset_check_execution_by_key([ROWS_PRESENT])[
            ROWS_PRESENT].status.value,
        "check_executions": {key.name: sorted((r.status.value, r.partition or "") for r in
                                              instance.event_log_storage.get_asset_check_execution_history(key, 100))
                             for key in CHECKS},
    }


def test_batched_writes_record_what_single_writes_record(tmp_path, monkeypatch):
    batch_event_writes()
    stock = instance_at(tmp_path / "stock", "telemetry:\n  enabled: false\n", monkeypatch)
    shipped = instance_at(tmp_path / "shipped", None, monkeypatch)
    assert isinstance(shipped.event_log_storage, BatchedSqliteEventLogStorage)
    assert not isinstance(stock.event_log_storage, BatchedSqliteEventLogStorage)
    figures = []
    for instance in (shipped, stock):
        monkeypatch.setenv("DAGSTER_HOME", instance.root_directory)
        batches = []
        if instance is shipped:
            original = BatchedSqliteEventLogStorage._store_asset_events
            monkeypatch.setattr(BatchedSqliteEventLogStorage, "_store_asset_events", lambda self, run_id, events: (
                batches.append((events[0].dagster_event_type.value, len(events))), original(self, run_id, events)))
        result = materialize([daily_counts, daily_rates], instance=instance, partition_key=None,
                             tags={"dagster/asset_partition_range_start": "2026-11-01",
                                   "dagster/asset_partition_range_end": "2026-11-30"})
        assert result.success
        figures.append(recorded(instance, result.run_id))
        if instance is shipped:
            # The run's planned events (two assets, three checks) are one batch, whatever their kind.
            assert sorted(batches) == [("ASSET_MATERIALIZATION", 30)] * 2 + [("ASSET_MATERIALIZATION_PLANNED", 63)]
    assert figures[0] == figures[1]
    assert PLANNED_MID_RUN == {shipped.root_directory: "PLANNED", stock.root_directory: "PLANNED"}
    assert figures[0]["materialized"]["daily_counts"] == DAYS.get_partition_keys()
    assert len(figures[0]["materializations"]) == 60
    assert figures[0]["check"] == "SUCCEEDED"
    assert {status for status, _ in figures[0]["check_executions"]["rates_bounded"]} == {"SUCCEEDED"}
    assert {status for status, _ in figures[0]["check_executions"]["counts_positive"]} == {"FAILED"}
    for instance in (shipped, stock):
        instance.dispose()
