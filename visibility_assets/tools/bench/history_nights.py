"""Nights of history written the way nightly runs write them, without HTTP: for `bench history`
and `bench serve`, which measure what a year of nights leaves behind, not the collection itself.

Each partition (day x platform) goes through the nightly path's own code, in the order and with
the commits its run makes: the collection journal (the plan, a checkpoint per half second of
collection at the platform's rate, the states last), the publish step, the cleaned samples, the
judge's tables, the incremental SQL models with their tests; and its Dagster run's records (the
run, its materializations with their metadata and its check evaluations). The answers come from
the simulator's generator (tools/simulator/offline.py) instead of HTTP. After each night the
lake maintenance runs when its schedule says so, as the shipped instance would run it. What
the filler leaves out, as it changes nothing a later night reads: the HTML report file and the
views' tests (which only read).
"""

from __future__ import annotations

import math
import multiprocessing
import os
import uuid
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from datetime import date, timedelta

from visibility_assets.collect.client import SUCCEEDED
from visibility_assets.collect.collector import CollectionSettings, PartitionOutcome
from visibility_assets.collect.journal import CollectionJournal
from visibility_assets.collect.plan import plan_requests
from visibility_assets.collect.publish import publish
from visibility_assets.collect.tally import CollectionTally
from visibility_assets.config import VisibilityConfig, load_config
from visibility_assets.core.partitions import Partition

# The workers are replaced after this many nights: a writer process kept growing (2.8 GB after
# 85 nights), which a nightly run, a process per platform and night, never does. (Not the
# executor's max_tasks_per_child: on Python 3.11 it hung once a worker had been replaced.)
NIGHTS_PER_WORKERS = 30


@dataclass(frozen=True)
class PartitionWritten:
    date: str
    platform: str
    answers: int
    failed_checks: tuple[str, ...]


class NightWriter:
    """Writes partitions in this process: the config, the SQL project, the simulated platforms,
    the warehouse and the Dagster instance, each opened once."""

    def __init__(self, config: VisibilityConfig, seed: int = 11):
        from visibility_assets.definitions import build_resources
        from visibility_assets.measure.project import load_project
        from visibility_assets.operate.instance import get_instance
        from visibility_assets.tools.simulator.behaviour import PlatformBehaviour, SimulatorSettings
        from visibility_assets.tools.simulator.offline import OfflinePlatforms

        self.config = config
        self.project = load_project()
        self.models = [model for model in self.project.models.values() if model.partitioned]
        self.platforms = OfflinePlatforms(config, SimulatorSettings(seed=seed, default=PlatformBehaviour()))
        self.warehouse = build_resources(config)["warehouse"]
        self.instance = get_instance()

    def write(self, day: str, platform_name: str) -> PartitionWritten:
        from visibility_assets.clean.defs import clean_partitions
        from visibility_assets.judge.defs import write_outcomes
        from visibility_assets.measure.runner import materialize_models

        config, run_id = self.config, str(uuid.uuid4())
        platform = config.platform(platform_name)
        partition = Partition(date.fromisoformat(day), platform_name)
        tally = self._collect(day, platform, run_id)
        published = publish(self.warehouse, [PartitionOutcome(day, platform_name, tally)], run_id)
        cleaned = clean_partitions([partition], config.catalog, self.warehouse, run_id, config.domains,
                                   weights=config.question_weights)
        write_outcomes(self.warehouse, [], [partition])  # the judge's tables, as a run without judge.yaml
        built = materialize_models(self.warehouse, self.project, self.models, [partition], run_id)
        metadata = {"raw_ai_responses": {"answers_stored": published[(day, platform_name)].answers},
                    "cleaned_samples": {k: v for k, v in cleaned.metadata.items() if isinstance(v, (int, str))},
                    **{name: {"rows_written": b.rows, "partitions": 1} for name, b in built.items()}}
        checks = {(model.name, test.name): built[model.name].failing[test.name]
                  for model in self.models for test in model.tests}
        record_run(self.instance, run_id, day, platform_name, metadata, checks)
        return PartitionWritten(day, platform_name, published[(day, platform_name)].answers,
                                tuple(f"{asset}.{check}" for (asset, check), failing in checks.items() if failing))

    def _collect(self, day: str, platform, run_id: str) -> CollectionTally:
        """The journal as the collector leaves it: the plan registered, the answers checkpointed
        in the batches that arrive per interval at the platform's rate, the states set last."""
        planned = plan_requests(self.config, platform, day)
        tally = CollectionTally(platform.name, day, planned=len(planned), to_send=len(planned),
                                planned_keys=[r.request_key for r in planned], permitted_rps=platform.rate_limit_rps)
        per_checkpoint = max(1, math.ceil(platform.rate_limit_rps * CollectionSettings().checkpoint_interval_s))
        with CollectionJournal(self.warehouse.settings(), day, platform.name) as journal:
            journal.register_plan(planned)
            outcomes = [self.platforms.answer(platform, request, run_id) for request in planned]
            for start in range(0, len(outcomes), per_checkpoint):
                batch = outcomes[start:start + per_checkpoint]
                journal.checkpoint([a for o in batch for a in o.attempts], batch, states=False)
            journal.checkpoint([], outcomes, states=True)
        tally.succeeded = sum(o.state == SUCCEEDED for o in outcomes)
        tally.attempts = len(outcomes)
        return tally


def record_run(instance, run_id: str, day: str, platform: str, metadata: dict[str, dict],
               checks: dict[tuple[str, str], int]) -> None:
    """The records a nightly run of the partition leaves in Dagster's storage: the run, its start,
    each asset's materialization with its metadata, each check's evaluation, its success; the
    asset events in one batch, as the instance's batched event writes store them."""
    from dagster import AssetCheckEvaluation, AssetCheckSeverity, AssetKey, AssetMaterialization
    from dagster._core.events import DagsterEvent, DagsterEventBatchMetadata, DagsterEventType, StepMaterializationData
    from dagster._core.storage.dagster_run import DagsterRun

    from visibility_assets.core.jobs import NIGHTLY_JOB
    from visibility_assets.core.partitions import partition_key, partition_tags

    key = str(partition_key(day, platform))
    instance.add_run(DagsterRun(job_name=NIGHTLY_JOB, run_id=run_id, tags=partition_tags(day, platform)))

    def event(kind: DagsterEventType, data=None) -> DagsterEvent:
        return DagsterEvent(event_type_value=kind.value, job_name=NIGHTLY_JOB, event_specific_data=data)

    instance.report_dagster_event(event(DagsterEventType.RUN_START), run_id)
    asset_events = [event(DagsterEventType.ASSET_MATERIALIZATION, StepMaterializationData(
        AssetMaterialization(asset_key=AssetKey(asset), partition=key, metadata=values)))
        for asset, values in metadata.items()]
    asset_events += [event(DagsterEventType.ASSET_CHECK_EVALUATION, AssetCheckEvaluation(
        asset_key=AssetKey(asset), check_name=check, passed=failing == 0, metadata={"failing_rows": failing},
        severity=AssetCheckSeverity.ERROR, partition=key)) for (asset, check), failing in checks.items()]
    batch = str(uuid.uuid4())
    for index, dagster_event in enumerate(asset_events):
        instance.report_dagster_event(dagster_event, run_id, batch_metadata=DagsterEventBatchMetadata(
            batch, index == len(asset_events) - 1))
    instance.report_dagster_event(event(DagsterEventType.RUN_SUCCESS), run_id)


# --- nights in worker processes -----------------------------------------------------------------

_WRITER: NightWriter | None = None


def _start_writer(config_dir: str, environment: dict) -> None:
    global _WRITER
    os.environ.update(environment)
    _WRITER = NightWriter(load_config(config_dir))


def _write(day_and_platform: tuple[str, str]) -> PartitionWritten:
    return _WRITER.write(*day_and_platform)


def _maintain(night: str) -> None:
    maintain_lake(_WRITER.config, date.fromisoformat(night))


def maintain_lake(config: VisibilityConfig, night: date) -> None:
    """The lake maintenance as the after-night run applies it (warehouse/defs.py)."""
    from visibility_assets.warehouse.lake import lake_settings
    from visibility_assets.warehouse.maintenance import maintain

    maintain(lake_settings(), night + timedelta(days=1), config.retention)


class HistoryWriter:
    """Nights written by `processes` worker processes, a night's platforms side by side, the
    nights one after another (an alert's baseline is the nights before), each followed by the
    lake maintenance when `maintenance_due` says it runs after that night."""

    def __init__(self, config: VisibilityConfig, processes: int = 2, nights_per_workers: int = NIGHTS_PER_WORKERS):
        self.config, self.processes, self.nights_per_workers = config, processes, nights_per_workers
        self.nights = 0
        self.pool = self._workers()

    def _workers(self) -> ProcessPoolExecutor:
        # A fresh DuckDB and Dagster per worker (spawn). An executor, not multiprocessing.Pool: a
        # worker that dies fails the night at once (BrokenProcessPool), where Pool.map waited forever.
        return ProcessPoolExecutor(self.processes, mp_context=multiprocessing.get_context("spawn"),
                                   initializer=_start_writer, initargs=(str(self.config.directory), dict(os.environ)))

    def __enter__(self) -> HistoryWriter:
        return self

    def __exit__(self, *exc) -> None:
        self.pool.shutdown(wait=True, cancel_futures=True)

    def night(self, day: date) -> list[PartitionWritten]:
        if self.nights and self.nights % self.nights_per_workers == 0:
            self.pool.shutdown(wait=True)
            self.pool = self._workers()
        self.nights += 1
        return list(self.pool.map(_write, [(day.isoformat(), name) for name in self.config.platform_names]))

    def maintain(self, night: date) -> None:
        """The lake maintenance after `night`, as the after-night run applies it, in a worker: the
        measuring process keeps no DuckDB of the nights it did not run."""
        self.pool.submit(_maintain, night.isoformat()).result()


def days_between(first: date, last: date) -> list[date]:
    return [first + timedelta(days=offset) for offset in range((last - first).days + 1)]
