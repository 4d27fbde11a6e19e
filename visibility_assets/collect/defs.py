"""Collect: raw_ai_responses, every answer of one platform on one day, verbatim, exactly once."""

import logging
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from datetime import time as clock_time
from zoneinfo import ZoneInfo

from dagster import (
    AssetExecutionContext,
    AssetKey,
    BackfillPolicy,
    Backoff,
    Config,
    Failure,
    Jitter,
    MaterializeResult,
    MetadataValue,
    MultiPartitionsDefinition,
    RetryPolicy,
    asset,
)
from pydantic import Field

from visibility_assets.collect.collector import SETUP_ERRORS, PartitionOutcome, fault_class_of
from visibility_assets.collect.ledger import failures_by_class
from visibility_assets.collect.publish import publish
from visibility_assets.collect.resource import CollectorResource
from visibility_assets.collect.tally import CollectionTally
from visibility_assets.config import UnknownPlatform, VisibilityConfig
from visibility_assets.config.resource import VisibilityConfigResource
from visibility_assets.core.days import TIMEZONE
from visibility_assets.core.partitions import Partition, run_partitions
from visibility_assets.core.progress import say
from visibility_assets.events.detect import BadRequest, adhoc_event
from visibility_assets.events.model import DONE, REQUESTED, Task
from visibility_assets.events.service import load_task, move_task, over_budget_message, record_events
from visibility_assets.warehouse.resource import WarehouseResource

# A partition that failed (platform down, breaker open) is retried by Dagster later; the
# journal makes the retry resume where the failed attempt stopped.
COLLECT_RETRY_POLICY = RetryPolicy(max_retries=3, delay=60, backoff=Backoff.EXPONENTIAL, jitter=Jitter.PLUS_MINUS)


class AskConfig(Config):
    """An ad-hoc request from the launchpad: these questions (or a category's, or all), N rounds."""

    questions: list[str] = Field(default_factory=list, description="question ids, e.g. [q001, q002]")
    category: str | None = Field(default=None, description="every question of this category")
    rounds: int = Field(default=1, ge=1, le=50, description="extra rounds of each question")


class CollectConfig(Config):
    deadline: str | None = Field(
        default=None,
        description="When to stop sending and defer the rest: 'HH:MM' (Asia/Shanghai, the next such"
        " time after the run starts) or an ISO datetime. Unset: no deadline.",
    )
    task_id: str | None = Field(
        default=None, description="Collect this event-driven task (collection_tasks) instead of the nightly plan.")
    ask: AskConfig | None = Field(
        default=None, description="Ask these questions now, under request keys of their own (an ad-hoc task).")


def resolve_deadline(text: str | None, now: datetime | None = None) -> float | None:
    if not text:
        return None
    zone = ZoneInfo(TIMEZONE)
    now = now or datetime.now(zone)
    try:
        at = clock_time.fromisoformat(text)
    except ValueError:
        moment = datetime.fromisoformat(text)
        return (moment if moment.tzinfo else moment.replace(tzinfo=zone)).timestamp()
    moment = datetime.combine(now.astimezone(zone).date(), at, tzinfo=zone)
    if moment <= now:
        moment += timedelta(days=1)
    return moment.timestamp()


# A partition's collection figures over all its runs (connection, date, platform -> figures by
# column): int_partition_requests' own, given by the root that assembles the stages
# (measure/partition_figures.py), since collect reads no model.
PartitionFigures = Callable[[object, str, str], dict]


def build_raw_ai_responses(partitions_def: MultiPartitionsDefinition, partition_figures: PartitionFigures,
                           retry_policy: RetryPolicy = COLLECT_RETRY_POLICY):
    """The asset over the config's partitions; tests pass a retry policy with a short delay."""

    @asset(
        name="raw_ai_responses",
        partitions_def=partitions_def,
        deps=[AssetKey("visibility_config_files")],
        retry_policy=retry_policy,
        # Like everything downstream, so a job of the chain has one backfill policy: a range
        # run collects its platforms side by side and each platform's days in turn.
        backfill_policy=BackfillPolicy.single_run(),
        group_name="collect",
        kinds={"duckdb", "python"},
        description="Every question x round asked of one platform on one day: answer text, full JSON"
        " payload, tokens, latency, content hash and the HTTP attempt that produced it.",
    )
    def raw_ai_responses(
        context: AssetExecutionContext,
        config: CollectConfig,
        visibility_config: VisibilityConfigResource,
        collector: CollectorResource,
        warehouse: WarehouseResource,
    ) -> MaterializeResult:
        partitions = run_partitions(context.partition_keys)
        loaded = visibility_config.load()
        task = task_of_run(context.run_id, config, loaded, partitions, warehouse)
        outcomes = collector.collect(loaded, partitions, context.run_id, warehouse,
                                     resolve_deadline(config.deadline), context.log.info, task)
        published = publish(warehouse, outcomes, context.run_id, task)
        stored = {partition: p.answers for partition, p in published.items()}
        metadata = run_metadata(outcomes, stored)
        if len(outcomes) == 1 and outcomes[0].report is not None:
            day, platform = outcomes[0].date, outcomes[0].platform
            with warehouse.read_only() as conn:
                metadata.update(partition_metadata(partition_figures(conn, day, platform),
                                                   failures_by_class(conn, day, platform)))
        snapshots = [p.snapshot for p in published.values() if p.snapshot is not None]
        if snapshots:
            metadata["lake_snapshot_id"] = max(snapshots)
        for outcome in outcomes:
            if outcome.report is not None:
                check_stored(outcome, published[(outcome.date, outcome.platform)].planned_answers, metadata)
        errors = list(dict.fromkeys(str(o.error) for o in outcomes if o.error is not None))
        if errors:
            # A missing key, a setting the platform cannot honour or an account to top up needs a
            # person; retrying the step would only fail again (or hammer a platform that said no).
            retry = all(needs_only_time(o.error) for o in outcomes if o.error is not None)
            if retry and context.retry_number < retry_policy.max_retries:
                announce_step_retry(context.log.info, retry_policy, context.retry_number + 1, "; ".join(errors))
            metadata["fault_class"] = fault_class_of(next(o.error for o in outcomes if o.error is not None))
            raise Failure(description="; ".join(errors), metadata=metadata, allow_retries=retry)
        if task is not None:
            report = outcomes[0].report
            metadata.update({"task_id": task.task_id, "task_kind": task.kind, "task_reason": task.reason})
            if report.deferred == 0 and task.state != DONE:
                move_task(warehouse, task.task_id, DONE, f"{report.succeeded} answered, {report.skipped_done}"
                          f" already stored", context.run_id)
        return MaterializeResult(metadata=metadata)

    return raw_ai_responses


def announce_step_retry(run_log: Callable[[str], None], policy: RetryPolicy, retry: int, why: str) -> None:
    """A failed step waits minutes before Dagster tries it again: say when, so that nobody
    takes the silence for a hang."""
    wait = policy.calculate_delay(retry)  # Dagster's own formula, its jitter included: "about"
    until = datetime.now().astimezone() + timedelta(seconds=wait)
    say(run_log, f"{why}; the step is tried again in about {wait:.0f} s, near {until:%H:%M:%S} (retry {retry} of"
           f" {policy.max_retries}); what it stored is kept", logging.WARNING)


def task_of_run(run_id: str, config: CollectConfig, loaded: VisibilityConfig, partitions: list[Partition],
                warehouse: WarehouseResource) -> Task | None:
    """The event-driven task this run collects: named by task_id, or created from `ask` (the
    launchpad; its event is keyed by the run, so a step retry finds the same task). None: nightly."""
    if config.task_id is None and config.ask is None:
        return None
    if len(partitions) != 1:
        raise Failure(description="an ad-hoc request or a task collects one partition; select one date and"
                      " platform", allow_retries=False)
    (day, platform), now = partitions[0], datetime.now(UTC)
    if config.ask is not None:
        try:
            event = adhoc_event(loaded, platform, day, config.ask.questions, config.ask.category,
                                config.ask.rounds, f"launchpad run {run_id}", now, ident=run_id)
        except (BadRequest, UnknownPlatform) as exc:
            raise Failure(description=f"ask: {exc}", allow_retries=False) from None
        plan = record_events(warehouse, loaded, [event], now)
        if not plan.new_tasks:
            raise Failure(description=f"ask: {over_budget_message(loaded, platform)}", allow_retries=False)
        return move_task(warehouse, plan.new_tasks[0].task_id, REQUESTED, "launched from the launchpad", run_id)
    task = load_task(warehouse, config.task_id)
    if task is None or (task.date, task.platform) != (day, platform):
        raise Failure(description=f"task {config.task_id} is not a task of {day} {platform} in collection_tasks",
                      allow_retries=False)
    return task


def check_stored(outcome: PartitionOutcome, stored: int, metadata: dict) -> None:
    """Every answer received must be in the journal; anything else is a bug, not a platform fault."""
    report = outcome.report
    if stored != report.skipped_done + report.succeeded:
        raise Failure(description=f"{outcome.date} {outcome.platform}: {stored} answers stored, but"
                      f" {report.skipped_done} were already done and {report.succeeded} succeeded in this run",
                      metadata=metadata, allow_retries=False)


def needs_only_time(error: Exception) -> bool:
    return not isinstance(error, SETUP_ERRORS) and getattr(error, "retryable", True)


def run_metadata(outcomes: list[PartitionOutcome], stored: dict[tuple[str, str], int]) -> dict:
    """One partition: its collection figures. A range run: the sum, and a line per partition."""
    reports = [o.report for o in outcomes if o.report is not None]
    if len(outcomes) == 1 and reports:
        return collection_metadata(reports[0], sum(stored.values()))
    return {
        "partitions": MetadataValue.int(len(outcomes)),
        "answers_stored": MetadataValue.int(sum(stored.values())),
        "succeeded": MetadataValue.int(sum(r.succeeded for r in reports)),
        "failed": MetadataValue.int(sum(r.failed for r in reports)),
        "deferred": MetadataValue.int(sum(r.deferred for r in reports)),
        "by_partition": MetadataValue.json({
            f"{o.date}|{o.platform}": {"stored": stored.get((o.date, o.platform)),
                                       "error": None if o.error is None else str(o.error)}
            for o in outcomes}),
    }


def partition_metadata(figures: dict, failures: dict) -> dict:
    """The partition over all its runs and step attempts (int_partition_requests' figures and
    the ledger's failures by class), beside the figures of this step attempt."""
    cost, wall_s = figures.get("cost"), figures.get("collection_wall_s")
    return {
        "partition_attempts": MetadataValue.int(figures.get("http_attempts") or 0),
        "partition_http_429": MetadataValue.int(figures.get("http_429") or 0),
        "partition_retries": MetadataValue.int(figures.get("retries") or 0),
        "partition_failed": MetadataValue.int(figures.get("failed_requests") or 0),
        "partition_failed_by_class": MetadataValue.json(failures["failed_by_class"]),
        "partition_attempt_errors_by_class": MetadataValue.json(failures["attempt_errors_by_class"]),
        "partition_runs": MetadataValue.int(figures.get("collection_runs") or 0),
        "partition_wall_s": MetadataValue.float(round(float(wall_s or 0), 1)),
        "partition_moderated": MetadataValue.int(figures.get("moderated") or 0),
        "partition_searches": MetadataValue.int(int(figures.get("searches") or 0)),
        "partition_cost": MetadataValue.null() if cost is None else MetadataValue.float(round(cost, 6)),
        "partition_currency": MetadataValue.text(figures.get("currency") or ""),
        "partition_latency_p50_ms": _ms(figures.get("latency_p50_ms")),
        "partition_latency_p95_ms": _ms(figures.get("latency_p95_ms")),
    }


def _ms(value: float | None):
    return MetadataValue.float(round(value, 1)) if value is not None else MetadataValue.null()


def collection_metadata(report: CollectionTally, stored: int) -> dict:
    return {
        "answers_stored": MetadataValue.int(stored),
        "planned": MetadataValue.int(report.planned),
        "skipped_already_done": MetadataValue.int(report.skipped_done),
        "sent": MetadataValue.int(report.to_send),
        "succeeded": MetadataValue.int(report.succeeded),
        "failed": MetadataValue.int(report.failed),
        "failed_by_class": MetadataValue.json(dict(report.failed_by_class)),
        "deferred": MetadataValue.int(report.deferred),
        "deferred_by_cost_cap": MetadataValue.int(report.deferred_by_cost),
        "moderated": MetadataValue.int(report.moderated),
        "truncated": MetadataValue.int(report.truncated),
        "searches": MetadataValue.int(report.searches),
        "cost": MetadataValue.float(round(report.cost, 6)) if report.currency else MetadataValue.null(),
        "currency": MetadataValue.text(report.currency or ""),
        "http_attempts": MetadataValue.int(report.attempts),
        "http_429": MetadataValue.int(report.http_429),
        "retries_histogram": MetadataValue.json({str(k): v for k, v in sorted(report.retries_histogram.items())}),
        "latency_p50_ms": _ms(report.latency_percentile(0.5)),
        "latency_p95_ms": _ms(report.latency_percentile(0.95)),
        "tokens": MetadataValue.int(report.tokens),
        "wall_s": MetadataValue.float(round(report.wall_s, 2)),
        "achieved_rps": MetadataValue.float(round(report.achieved_rps, 2)),
        "permitted_rps": MetadataValue.float(report.permitted_rps),
    }
