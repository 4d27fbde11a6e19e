"""Collect: raw_ai_responses, every answer of one platform on one day, verbatim, exactly once."""

from datetime import datetime, timedelta
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

from ..collect.collector import SETUP_ERRORS, PartitionOutcome
from ..collect.report import CollectionReport
from ..days import TIMEZONE
from ..warehouse.resource import WarehouseResource
from .partitions import split_partition_key
from .resources import CollectorResource, VisibilityConfigResource

# A partition that failed (platform down, breaker open) is retried by Dagster later; the
# journal makes the retry resume where the failed attempt stopped.
COLLECT_RETRY_POLICY = RetryPolicy(max_retries=3, delay=60, backoff=Backoff.EXPONENTIAL, jitter=Jitter.PLUS_MINUS)


class CollectConfig(Config):
    deadline: str | None = Field(
        default=None,
        description="When to stop sending and defer the rest: 'HH:MM' (Asia/Shanghai, the next such"
        " time after the run starts) or an ISO datetime. Unset: no deadline.",
    )


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


def build_raw_ai_responses(partitions_def: MultiPartitionsDefinition,
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
        partitions = sorted({split_partition_key(key) for key in context.partition_keys})
        outcomes = collector.collect(visibility_config.load(), partitions, context.run_id, warehouse,
                                     resolve_deadline(config.deadline), context.log.info)
        # Publish even a failed collection: what did arrive, and why the rest did not, is visible.
        published = {(o.date, o.platform): warehouse.publish_collection(o.date, o.platform)
                     for o in outcomes if o.report is not None}
        stored = {partition: count for partition, (count, _) in published.items()}
        metadata = run_metadata(outcomes, stored)
        snapshots = [snapshot for _, snapshot in published.values() if snapshot is not None]
        if snapshots:
            metadata["lake_snapshot_id"] = max(snapshots)
        for outcome in outcomes:
            if outcome.report is not None:
                check_stored(outcome, stored[(outcome.date, outcome.platform)], metadata)
        errors = list(dict.fromkeys(str(o.error) for o in outcomes if o.error is not None))
        if errors:
            # A missing key, a setting the platform cannot honour or an account to top up needs a
            # person; retrying the step would only fail again (or hammer a platform that said no).
            retry = all(needs_only_time(o.error) for o in outcomes if o.error is not None)
            raise Failure(description="; ".join(errors), metadata=metadata, allow_retries=retry)
        return MaterializeResult(metadata=metadata)

    return raw_ai_responses


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


def collection_metadata(report: CollectionReport, stored: int) -> dict:
    def ms(value: float | None):
        return MetadataValue.float(round(value, 1)) if value is not None else MetadataValue.null()

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
        "latency_p50_ms": ms(report.latency_percentile(0.5)),
        "latency_p95_ms": ms(report.latency_percentile(0.95)),
        "tokens": MetadataValue.int(report.tokens),
        "wall_s": MetadataValue.float(round(report.wall_s, 2)),
        "achieved_rps": MetadataValue.float(round(report.achieved_rps, 2)),
        "permitted_rps": MetadataValue.float(report.permitted_rps),
    }
