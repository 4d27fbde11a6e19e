"""The code location: `dagster dev -w workspace.yaml` and `dg dev` load these Definitions."""

from dagster import Definitions

from .assets.cleaning import brand_catalog, cleaned_samples
from .assets.raw_responses import raw_ai_responses
from .assets.report import visibility_report
from .operations import nightly_collection, nightly_job
from .resources import CollectorResource, VisibilityConfigResource
from .sql_models.assets import build_sql_assets
from .warehouse import default_warehouse


def resources() -> dict:
    return {
        "visibility_config": VisibilityConfigResource(),
        "collector": CollectorResource(),
        "warehouse": default_warehouse(),
    }



defs = Definitions(assets=[raw_ai_responses, brand_catalog, cleaned_samples, *build_sql_assets(),
                           visibility_report],
                   jobs=[nightly_job], schedules=[nightly_collection], resources=resources())
