"""The digest's job and schedules: weekly on Mondays at 09:00 Asia/Shanghai, and daily at 09:00
when events.yaml asks (`notifications.digests.daily`); only when digests are routed somewhere.
A delivery that fails fails the run, so the failed-run sensor and the UI show it."""

from dataclasses import replace
from pathlib import Path
from typing import Literal

from dagster import Config, Failure, OpExecutionContext, ScheduleDefinition, job, op

from visibility_assets.config import VisibilityConfig
from visibility_assets.config.resource import VisibilityConfigResource
from visibility_assets.core.days import TIMEZONE
from visibility_assets.core.jobs import DIGEST_JOB
from visibility_assets.core.paths import DataDirResource
from visibility_assets.warehouse.resource import WarehouseResource

WEEKLY_CRON, DAILY_CRON = "0 9 * * 1", "0 9 * * *"


class DigestConfig(Config):
    period: Literal["week", "day"] = "week"


@op(description="The digest of the own brands, composed from the workspace's views and sent where events.yaml"
                " routes digests.")
def send_digest_op(context: OpExecutionContext, config: DigestConfig, visibility_config: VisibilityConfigResource,
                   data_dir: DataDirResource, warehouse: WarehouseResource) -> None:
    # The workspace (its web app, the MCP SDK, pandas) is imported by the run that sends a
    # digest, not by every process that loads the definitions (each night's worker server).
    from visibility_assets.operate.digest import compose_digest, send_digest
    from visibility_assets.serve.app import build_workspace
    from visibility_assets.serve.settings import ServeSettings

    settings = visibility_config.load()
    workspace = build_workspace(replace(ServeSettings.from_env(), home=Path(data_dir.path)), settings,
                                warehouse.settings())
    try:
        digest = compose_digest(workspace, config.period)
    finally:
        workspace.settle()
    sent = send_digest(settings, digest)
    for result in sent:
        context.log.info(f"{result.where}: {'sent' if result.delivered else 'FAILED'} ({result.detail})")
    failed = [result for result in sent if not result.delivered]
    if failed:
        raise Failure(f"the {config.period}'s digest was not delivered to " + "; ".join(
            f"{result.where} ({result.detail})" for result in failed))


@job(name=DIGEST_JOB, description="The digest of the own brands, sent to its webhooks and mailboxes.")
def digest_job():
    send_digest_op()


def build_digest_schedules(config: VisibilityConfig) -> list[ScheduleDefinition]:
    routes = config.notifications.digests
    if not routes.webhooks and routes.email is None:
        return []
    schedules = [ScheduleDefinition(name="weekly_digest", job=digest_job, cron_schedule=WEEKLY_CRON,
                                    execution_timezone=TIMEZONE, run_config=_period("week"),
                                    description="Mondays 09:00 Asia/Shanghai: the week's digest of the own brands.")]
    if routes.daily:
        schedules.append(ScheduleDefinition(name="daily_digest", job=digest_job, cron_schedule=DAILY_CRON,
                                            execution_timezone=TIMEZONE, run_config=_period("day"),
                                            description="09:00 Asia/Shanghai: yesterday's digest of the own brands."))
    return schedules


def _period(period: str) -> dict:
    return {"ops": {"send_digest_op": {"config": {"period": period}}}}
