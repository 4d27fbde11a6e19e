"""Launching the pipeline's jobs from a command or a benchmark: one in-process Dagster run per
partition, a partition per worker process when several run at once, and the re-analysis backfill.

Each run carries its partition's dimension tags, so the instance's per-platform run limits
(tag concurrency on dagster/partition/platform) apply to runs launched from here too.
Several partitions run at once in separate worker processes: Dagster's SQLite instance
storage is safe across processes but deadlocks across threads of one process.
"""

from __future__ import annotations

import os
import sys
import tempfile
import threading
import time
import uuid
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor, as_completed, wait
from dataclasses import replace
from datetime import date
from pathlib import Path
from typing import TextIO, TypeVar

from dagster import DagsterInstance

from visibility_assets.config import VisibilityConfig
from visibility_assets.core import interrupts
from visibility_assets.core.faults import DISK_FULL, DOWNSTREAM, as_disk_full
from visibility_assets.core.interrupts import handling_stop_signals
from visibility_assets.operate.failed_runs import classify_failed_run
from visibility_assets.operate.instance.command_runs import end_as_failed, reap_dead_runs
from visibility_assets.partition_run import PartitionRun, materialization_metadata, run_job
from visibility_assets.warehouse.lake import THREADS_ENV
from visibility_assets.worker_server import worker_processes

# How long a run told to stop may take to store what it has and end, before the command gives up on it.
STOP_GRACE_S = 20.0
T = TypeVar("T")


def run_in_foreground(work: Callable[[], T], grace_s: float = STOP_GRACE_S) -> T:
    """`work` (a run) in a thread, while this main thread takes the stop signals: the first one
    stops a collection, which stores what it has and fails the run; if the run has not ended
    `grace_s` later, or a second signal comes, Interrupted is raised here."""
    outcome: dict = {}

    def target() -> None:
        try:
            outcome["value"] = work()
        except BaseException as exc:  # handed to the main thread, which raises it
            outcome["error"] = exc

    with handling_stop_signals():
        thread = threading.Thread(target=target, name="run", daemon=True)
        thread.start()
        give_up_at = None
        while thread.is_alive():
            thread.join(0.2)
            signum = interrupts.received()
            if signum is not None and give_up_at is None:
                give_up_at = time.monotonic() + grace_s
            if thread.is_alive() and give_up_at is not None and (
                    time.monotonic() > give_up_at or interrupts.count() > 1):
                raise interrupts.Interrupted(signum)
    if "error" in outcome:
        raise outcome["error"]
    return outcome["value"]


def materialize_partitions(config_dir: Path, keys: list[tuple[str, str]], parallel: int = 6,
                           run_config: dict | None = None,
                           on_done: Callable[[PartitionRun], None] = lambda _: None,
                           head_start_s: float = 0.0) -> list[PartitionRun]:
    """Run each (date, platform) in a worker process, `parallel` at a time, in the order given.
    With `head_start_s`, the first one starts that long before the others (or until it ends):
    a run's start (its records, the plan's commit, which the workers take in turns) then does
    not wait behind theirs on two cores."""
    from visibility_assets.operate.instance import get_instance

    instance = get_instance()  # set up DAGSTER_HOME's storage once, before the workers share it
    reap_dead_runs(instance)  # runs an earlier command left behind when it died hold slots still
    # The workers fork from a server that started before this call's environment was set (the
    # simulators' addresses, DAGSTER_HOME): each takes the caller's environment and directory.
    request = {"config_dir": str(config_dir), "run_config": run_config, "cwd": os.getcwd(),
               "environment": {**worker_threads(parallel, len(keys)), **os.environ}}
    live = _LiveWorkers()
    try:
        with ThreadPoolExecutor(max_workers=max(1, parallel)) as pool:
            def submit(date: str, platform: str) -> Future:
                return pool.submit(_run_in_worker, date, platform, {**request, "run_id": str(uuid.uuid4())},
                                   instance, live)

            futures = [submit(*key) for key in keys[:1]]
            if head_start_s > 0:
                wait(futures, timeout=head_start_s)
            futures += [submit(*key) for key in keys[1:]]
            for future in as_completed(futures):
                run = future.result()
                if not run.success and (run.error or "").startswith(DISK_FULL):
                    live.stop_all()  # nothing can be stored; and a slot a dead worker held is waited for in vain
                on_done(run)
            return [f.result() for f in futures]
    finally:
        live.ended()


def worker_threads(parallel: int, runs: int) -> dict[str, str]:
    """Each worker's DuckDB threads: its share of the machine's cores among the runs side by
    side (warehouse/lake.py threads_setting); a user's VISIBILITY_DUCKDB_THREADS wins."""
    side_by_side = max(1, min(parallel, runs))
    return {THREADS_ENV: str(max(1, (os.cpu_count() or 1) // side_by_side))}


class _LiveWorkers:
    """The worker processes of one materialize_partitions call, so that they can all be stopped."""

    def __init__(self) -> None:
        self._processes: set = set()
        self._lock = threading.Lock()
        self.stopping = False
        self._killer: threading.Timer | None = None

    def add(self, process) -> bool:
        with self._lock:
            if not self.stopping:
                self._processes.add(process)
            return not self.stopping

    def remove(self, process) -> None:
        with self._lock:
            self._processes.discard(process)

    def stop_all(self) -> None:
        """SIGTERM (a collection stores what it has), then SIGKILL what has not ended after a while."""
        with self._lock:
            if self.stopping:
                return  # stopped already: the workers added since were refused
            self.stopping, processes = True, list(self._processes)
        for process in processes:
            process.terminate()
        self._killer = threading.Timer(STOP_GRACE_S, lambda: [p.kill() for p in processes if p.is_alive()])
        self._killer.start()

    def ended(self) -> None:
        """Every worker has been waited for: nothing is left to kill. (A timer still pending would
        keep the command alive for the rest of its grace after its work is done.)"""
        if self._killer is not None:
            self._killer.cancel()


def _run_partition(*args) -> None:
    """The worker's target: run_worker's, imported in the worker (forked from the server that
    preloaded it), not in this process, which has no use for what that module loads."""
    from visibility_assets.run_worker import run_partition

    run_partition(*args)


def _run_in_worker(date: str, platform: str, request: dict, instance: DagsterInstance,
                   live: _LiveWorkers) -> PartitionRun:
    run = _worker_run(date, platform, request, live)
    if not run.success and live.stopping and not (run.error or "").startswith(DISK_FULL):
        run = replace(run, error=f"stopped: another partition found that {DISK_FULL}", fault_class=DOWNSTREAM)
    if not run.success:  # a worker that crashed, or whose Dagster storage failed, left its run started
        try:
            stored = instance.get_run_by_id(request["run_id"])
            if stored is not None:
                end_as_failed(instance, stored, run.error or "the run's worker ended without a word")
        except Exception as exc:  # the storage itself may be what failed: the next command ends it
            if as_disk_full(exc) is None:
                raise
    return run


def _worker_run(date: str, platform: str, request: dict, live: _LiveWorkers) -> PartitionRun:
    context = worker_processes()
    with tempfile.NamedTemporaryFile(prefix="visibility-run-", suffix=".log") as log:
        receiver, sender = context.Pipe(duplex=False)
        worker = context.Process(target=_run_partition, args=(date, platform, request, sender, log.name),
                                 name=f"run {date} {platform}")
        if live.stopping:
            return PartitionRun(date, platform, False, "", {}, f"not run: another partition found that {DISK_FULL}",
                                DOWNSTREAM)
        worker.start()
        if not live.add(worker):
            worker.terminate()
        sender.close()
        try:
            outcome = receiver.recv()
        except EOFError:  # the worker died before it could answer
            outcome = None
        worker.join()
        live.remove(worker)
        if outcome is not None:
            return PartitionRun(**outcome)
        detail = Path(log.name).read_text(encoding="utf-8", errors="replace").strip()[-2000:]
        return PartitionRun(date, platform, False, request["run_id"], {}, f"worker exited {worker.exitcode}: {detail}")


def run_backfill(config: VisibilityConfig, since: date, until: date, platforms: list[str], out: TextIO | None = None) -> int:
    """catalog_job first (so the new config version is recorded), then for each platform one
    run of reanalysis_job over the range: cleaned_samples and everything downstream, never
    raw_ai_responses."""
    out = out or sys.stdout  # the stream of the call (a test's, a redirected one), not of the import
    from visibility_assets.definitions import build_definitions
    from visibility_assets.operate.automation import backfill_tags, catalog_job, reanalysis_job, report_job
    from visibility_assets.operate.instance import get_instance, planned_events_as_subsets

    defs = build_definitions(config)
    instance = get_instance()
    catalog = run_job(defs, catalog_job.name, instance)
    if not catalog.success:
        print("brand_catalog failed to load; nothing re-analysed", file=out)
        return 1
    version = catalog.asset_materializations_for_node("brand_catalog")[0].tags.get("dagster/data_version")
    print(f"brand catalog {version}: re-analysing {since} .. {until} for {', '.join(platforms)}", file=out, flush=True)
    failures = 0
    with planned_events_as_subsets():  # one planned event per asset, not per partition
        for platform in platforms:
            result = run_job(defs, reanalysis_job.name, instance, tags=backfill_tags(since, until, platform))
            samples = materialization_metadata(result).get("cleaned_samples", {}).get("samples", 0)
            failures += not result.success
            why = "" if result.success else ": {1} ({0} fault)".format(*classify_failed_run(instance, result.run_id))
            print(f"  {platform:<10} {'ok' if result.success else 'FAILED'}: {samples} samples re-analysed"
                  f" (run {result.run_id}){why}", file=out, flush=True)
    # As after a night: the tables built over all history, the report, and the lake compacted
    # (a backfill replaced every partition it covered).
    after = run_job(defs, report_job.name, instance)
    failures += not after.success
    print(f"  report, tables and maintenance {'ok' if after.success else 'FAILED'} (run {after.run_id})", file=out,
          flush=True)
    return 1 if failures else 0
