"""raw_ai_responses: every answer of one platform on one day, verbatim, exactly once."""


from datetime import datetime, time as clock_time, timedelta
from zoneinfo import ZoneInfo

from dagster import (
    AssetExecutionContext,
    Backoff,
    Config,
    Failure,
    Jitter,
    MaterializeResult,
    MetadataValue,
    RetryPolicy,
    asset,
)
from pydantic import Field

from ..collect.collector import CollectionFailed, CollectionReport
from .config_files import visibility_config_files
from ..collect.journal import journal_path
from ..config import MissingApiKey
from .partitions import TIMEZONE, daily_platform_partitions, split_partition_key
from .resources import CollectorResource, VisibilityConfigResource
from ..warehouse.resource import WarehouseResource

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


def build_raw_ai_responses(retry_policy: RetryPolicy = COLLECT_RETRY_POLICY):
    """The asset; tests pass a retry policy with a short delay, the code location the default."""

    @asset(
        name="raw_ai_responses",
        partitions_def=daily_platform_partitions,
        deps=[visibility_config_files],
        retry_policy=retry_policy,
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
        date, platform = split_partition_key(context.partition_key)
        settings = visibility_config.load()
        failure: CollectionFailed | None = None
        try:
            report = collector.collect(settings, date, platform, context.run_id,
                                       resolve_deadline(config.deadline), context.log.info)
        except MissingApiKey as exc:
            raise Failure(description=str(exc), allow_retries=False) from None
        except CollectionFailed as exc:
            failure, report = exc, exc.report
        # Publish even a failed collection: what did arrive, and why the rest did not, is visible.
        stored = warehouse.publish_collection(journal_path(date, platform), date, platform)
        metadata = collection_metadata(report, stored)
        if stored != report.skipped_done + report.succeeded:
            # Every answer received must be in the journal; anything else is a bug, not a platform fault.
            raise Failure(description=f"{stored} answers stored, but {report.skipped_done} were already done and"
                          f" {report.succeeded} succeeded in this run", metadata=metadata, allow_retries=False)
        if failure:
            raise Failure(description=str(failure), metadata=metadata)
        return MaterializeResult(metadata=metadata)

    return raw_ai_responses


raw_ai_responses = build_raw_ai_responses()


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
