"""Materialize partitions from code: one in-process Dagster run per partition.

Each run carries its partition's dimension tags, so the instance's per-platform run limits
(tag concurrency on dagster/partition/platform) apply to runs launched from here too.
Several partitions run at once in separate worker processes: Dagster's SQLite instance
storage is safe across processes but deadlocks across threads of one process.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import asdict, dataclass

from dagster import AssetsDefinition, DagsterInstance, materialize

from ..defs.partitions import partition_key, partition_tags


# Dagster's console logger prints every event at DEBUG; commands print their own progress.
QUIET_RUN = {"loggers": {"console": {"config": {"log_level": "WARNING"}}}}


@dataclass
class PartitionRun:
    date: str
    platform: str
    success: bool
    run_id: str
    metadata: dict  # asset key (str) -> materialization metadata values
    error: str | None = None


def materialize_partition(assets: list[AssetsDefinition], date: str, platform: str,
                          instance: DagsterInstance, resources: dict, run_config: dict | None = None,
                          selection=None) -> PartitionRun:
    result = materialize(
        assets, partition_key=partition_key(date, platform), instance=instance, resources=resources,
        tags=partition_tags(date, platform), run_config=run_config, selection=selection,
        raise_on_error=False,
    )
    metadata = {
        event.asset_key.to_user_string(): {k: v.value for k, v in event.materialization.metadata.items()}
        for event in result.get_asset_materialization_events()
    }
    error = None
    if not result.success:
        failures = [e.event_specific_data.error.message.strip() for e in result.get_step_failure_events()
                    if e.event_specific_data and e.event_specific_data.error]
        error = failures[-1] if failures else "run failed"
    return PartitionRun(date, platform, result.success, result.run_id, metadata, error)


def materialize_partitions(keys: list[tuple[str, str]], parallel: int = 6, run_config: dict | None = None,
                           selection: list[str] | None = None,
                           on_done: Callable[[PartitionRun], None] = lambda _: None) -> list[PartitionRun]:
    """Run each (date, platform) in a worker process, `parallel` at a time, in the order given."""
    request = {"run_config": run_config, "selection": selection}
    with ThreadPoolExecutor(max_workers=max(1, parallel)) as pool:
        futures = [pool.submit(_run_in_worker, date, platform, request) for date, platform in keys]
        for future in as_completed(futures):
            on_done(future.result())
        return [f.result() for f in futures]


def _run_in_worker(date: str, platform: str, request: dict) -> PartitionRun:
    completed = subprocess.run(
        [sys.executable, "-m", "visibility_assets.cli.partition_runs", date, platform],
        input=json.dumps(request), capture_output=True, text=True,
    )
    lines = completed.stdout.strip().splitlines()
    try:
        return PartitionRun(**json.loads(lines[-1]))
    except (IndexError, ValueError, TypeError):
        detail = (completed.stderr or completed.stdout).strip()[-2000:]
        return PartitionRun(date, platform, False, "", {}, f"worker exited {completed.returncode}: {detail}")


def _worker_main() -> None:
    from ..definitions import defs, resources
    from ..instance import get_instance

    date, platform = sys.argv[1], sys.argv[2]
    request = json.loads(sys.stdin.read() or "{}")
    run = materialize_partition(list(defs.assets), date, platform, get_instance(), resources(),
                                request.get("run_config"), request.get("selection"))
    print(json.dumps(asdict(run), default=str))


if __name__ == "__main__":
    _worker_main()
