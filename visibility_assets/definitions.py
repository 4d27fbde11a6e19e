"""The code location: `dagster dev -w workspace.yaml` and `dg dev` load these Definitions."""

from dagster import Definitions, in_process_executor

from .defs.clean import brand_catalog, cleaned_samples
from .defs.config_files import visibility_config_files
from .defs.collect import raw_ai_responses
from .defs.report import visibility_report
from .instance import batch_event_writes
from .defs.automation import catalog_change_sensor, nightly_collection, nightly_job
from .defs.resources import CollectorResource, VisibilityConfigResource
from .defs.measure import build_sql_assets
from .warehouse.resource import default_warehouse


def resources() -> dict:
    return {
        "visibility_config": VisibilityConfigResource(),
        "collector": CollectorResource(),
        "warehouse": default_warehouse(),
    }

# Loaded by the code server and by every run worker, the processes that write asset events.
batch_event_writes()

# In-process execution: the multiprocess default costs ~2 s per step, and a run is one
# platform's day; parallelism comes from running platforms side by side.
defs = Definitions(
    assets=[visibility_config_files, raw_ai_responses, brand_catalog, cleaned_samples, *build_sql_assets(),
            visibility_report],
    jobs=[nightly_job],
    schedules=[nightly_collection],
    sensors=[catalog_change_sensor],
    resources=resources(),
    executor=in_process_executor,
)
