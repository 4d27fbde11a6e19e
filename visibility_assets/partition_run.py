"""One partition's nightly run, in this process: the Dagster run as the schedule tags it, and what
it materialized. runs.py launches several (in worker processes, run_worker.py), commands one."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime

from dagster import DagsterInstance, Definitions, ExecuteInProcessResult, partition_loading_context

from visibility_assets.core.partitions import partition_key, partition_tags
from visibility_assets.operate.automation import nightly_job
from visibility_assets.operate.failed_runs import classify_failed_run
from visibility_assets.operate.instance.command_runs import command_run_tags

# Dagster's console logger prints every event at DEBUG, and a failure with its stack trace;
# commands print their own progress (core/progress.py) and a failure's message.
QUIET_RUN = {"loggers": {"console": {"config": {"log_level": "CRITICAL"}}}}


@dataclass
class PartitionRun:
    date: str
    platform: str
    success: bool
    run_id: str
    metadata: dict  # asset key (str) -> materialization metadata values
    error: str | None = None
    fault_class: str | None = None  # whose the failure is (core/faults.py); set on the run as a tag too


def run_job(defs: Definitions, job_name: str, instance: DagsterInstance, run_config: dict | None = None,
            **kwargs) -> ExecuteInProcessResult:
    """One run of a job of the code location, quiet unless the caller passes its own run config.

    The run reads the partitions as of its start: each step of an asset that reads every
    partition of another (a view over the nightly models) has Dagster list them all for its
    provenance, 4,000 keys and 45 ms a time, which Dagster computes once per moment."""
    with partition_loading_context(effective_dt=datetime.now(UTC)):
        return defs.resolve_job_def(job_name).execute_in_process(
            instance=instance, run_config=run_config or QUIET_RUN, raise_on_error=False, **kwargs)


def materialize_partition(defs: Definitions, date: str, platform: str, instance: DagsterInstance,
                          run_config: dict | None = None, extra_tags: dict[str, str] | None = None,
                          run_id: str | None = None) -> PartitionRun:
    """One nightly run of one partition, tagged as the schedule tags it, and with the host and
    pid that execute it (so that the next command finds it if this process dies)."""
    result = run_job(defs, nightly_job.name, instance, run_config, partition_key=partition_key(date, platform),
                     tags={**partition_tags(date, platform), **command_run_tags(), **(extra_tags or {})},
                     run_id=run_id)
    if result.success:
        return PartitionRun(date, platform, True, result.run_id, materialization_metadata(result))
    fault_class, error = classify_failed_run(instance, result.run_id)
    return PartitionRun(date, platform, False, result.run_id, materialization_metadata(result), error, fault_class)


def materialization_metadata(result: ExecuteInProcessResult) -> dict:
    """Asset key (str) -> the values of its materialization's metadata."""
    return {
        event.asset_key.to_user_string(): {k: v.value for k, v in event.materialization.metadata.items()}
        for event in result.get_asset_materialization_events()
    }
