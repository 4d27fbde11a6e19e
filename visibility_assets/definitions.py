"""The code location: `dagster dev -w workspace.yaml` and `dg dev` load `defs`.

`build_definitions` builds everything from one loaded config: the platform dimension of the
partitions, the assets, the schedule and sensors, and the resources they read the config and
the data directory through. `defs` calls it once, when Dagster loads the code location.
"""

from __future__ import annotations

from dagster import Definitions, RetryPolicy, definitions, in_process_executor

from visibility_assets.clean.defs import brand_catalog, build_cleaned_samples
from visibility_assets.collect.defs import COLLECT_RETRY_POLICY, build_raw_ai_responses
from visibility_assets.collect.resource import CollectorResource
from visibility_assets.config import VisibilityConfig, load_config
from visibility_assets.config.defs import visibility_config_files
from visibility_assets.config.resource import VisibilityConfigResource
from visibility_assets.core.partitions import daily_platform_partitions
from visibility_assets.core.paths import DataDirResource, data_dir
from visibility_assets.events.defs import collection_task_sensor
from visibility_assets.judge.defs import build_judge_verdicts
from visibility_assets.measure.defs import build_sql_assets
from visibility_assets.measure.partition_figures import partition_figures_of
from visibility_assets.measure.project import load_project
from visibility_assets.notify.defs import build_alert_notifications
from visibility_assets.operate.automation import JOBS, build_nightly_schedule, catalog_change_sensor, review_sensor
from visibility_assets.operate.digest_schedule import build_digest_schedules, digest_job
from visibility_assets.operate.failed_runs import fault_of_failed_run
from visibility_assets.operate.instance import batch_event_writes
from visibility_assets.report.defs import build_report_sensor, visibility_report
from visibility_assets.warehouse.defs import lake_maintenance
from visibility_assets.warehouse.lake import lake_settings
from visibility_assets.warehouse.resource import WarehouseResource


def build_definitions(config: VisibilityConfig, collect_retry_policy: RetryPolicy = COLLECT_RETRY_POLICY) -> Definitions:
    """The whole pipeline for `config`, in pipeline order; tests pass a short retry policy."""
    partitions = daily_platform_partitions(config.platform_names)
    project = load_project()
    return Definitions(
        assets=[
            visibility_config_files,
            build_raw_ai_responses(partitions, partition_figures_of(project), collect_retry_policy),
            brand_catalog,
            build_cleaned_samples(partitions),
            build_judge_verdicts(partitions, judged=config.judge is not None),
            *build_sql_assets(partitions, project),
            build_alert_notifications(partitions, project),
            visibility_report,
            lake_maintenance,
        ],
        jobs=[*JOBS, digest_job],
        schedules=[build_nightly_schedule(config.platform_names), *build_digest_schedules(config)],
        sensors=[catalog_change_sensor, collection_task_sensor, build_report_sensor(config.platform_names),
                 fault_of_failed_run, review_sensor],
        resources=build_resources(config),
        # In-process execution: the multiprocess default costs ~2 s per step, and a run is one
        # platform's day; parallelism comes from running platforms side by side.
        executor=in_process_executor,
    )


def build_resources(config: VisibilityConfig) -> dict:
    """The resources of a code location built from `config`, with its files under the data directory."""
    return {
        "visibility_config": VisibilityConfigResource(config_dir=str(config.directory)),
        "data_dir": DataDirResource(path=str(data_dir())),
        "collector": CollectorResource(),
        "warehouse": WarehouseResource.from_settings(lake_settings()),
    }


@definitions
def defs() -> Definitions:
    """Loaded by the code server and by every run worker, the processes that write asset events."""
    batch_event_writes()
    return build_definitions(load_config())
