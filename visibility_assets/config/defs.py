"""The YAML config as an observable source: its data version is the hash of every config file."""

from dagster import DataVersion, observable_source_asset

from visibility_assets.config.resource import VisibilityConfigResource


@observable_source_asset(
    group_name="config",
    description="The config folder: brands.yaml, questions.yaml, platforms.yaml and the optional prices.yaml,"
    " events.yaml, canaries.yaml and domains.yaml. Observing it records the hash of the files, so a change"
    " to any of them shows in the lineage of everything built from them.",
)
def visibility_config_files(visibility_config: VisibilityConfigResource) -> DataVersion:
    return DataVersion(visibility_config.load().version)  # validates: an invalid config fails the observation
