"""The code location: `dagster dev -w workspace.yaml` and `dg dev` load `defs`.

`build_definitions` builds everything from one loaded config: the platform dimension of the
partitions, the assets, the schedule and sensors, and the resources they read the config and
the data directory through. `defs` calls it once, when Dagster loads the code location.
"""

from __future__ import annotations

from dagster import Definitions, RetryPolicy, definitions, in_process_executor

from .config import VisibilityConfig, load_config
from .defs.automation import build_nightly_schedule, catalog_change_sensor, catalog_job, nightly_job, reanalysis_job
from .defs.clean import brand_catalog, build_cleaned_samples
from .defs.collect import COLLECT_RETRY_POLICY, build_raw_ai_responses
from .defs.config_files import visibility_config_files
from .defs.events import collection_task_sensor
from .defs.maintenance import lake_maintenance, maintenance_job, weekly_maintenance
from .defs.measure import build_sql_assets
from .defs.notify import build_alert_notifications
from .sql_models.project import load_project
from .defs.partitions import daily_platform_partitions
from .defs.report import build_report_sensor, report_job, visibility_report
from .defs.resources import build_resources
from .instance import batch_event_writes


def build_definitions(config: VisibilityConfig, collect_retry_policy: RetryPolicy = COLLECT_RETRY_POLICY) -> Definitions:
    """The whole pipeline for `config`, in pipeline order; tests pass a short retry policy."""
    partitions = daily_platform_partitions(config.platform_names)
    project = load_project()
    return Definitions(
        assets=[
            visibility_config_files,
            build_raw_ai_responses(partitions, collect_retry_policy),
            brand_catalog,
            build_cleaned_samples(partitions),
            *build_sql_assets(partitions, project),
            build_alert_notifications(partitions, project),
            visibility_report,
            lake_maintenance,
        ],
        jobs=[nightly_job, reanalysis_job, catalog_job, report_job, maintenance_job],
        schedules=[build_nightly_schedule(config.platform_names), weekly_maintenance],
        sensors=[catalog_change_sensor, collection_task_sensor, build_report_sensor(config.platform_names)],
        resources=build_resources(config),
        # In-process execution: the multiprocess default costs ~2 s per step, and a run is one
        # platform's day; parallelism comes from running platforms side by side.
        executor=in_process_executor,
    )


@definitions
def defs() -> Definitions:
    """Loaded by the code server and by every run worker, the processes that write asset events."""
    batch_event_writes()
    return build_definitions(load_config())
