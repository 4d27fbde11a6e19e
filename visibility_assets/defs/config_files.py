"""The YAML config as an observable source: its data version is the hash of the files."""

import hashlib

from dagster import DataVersion, observable_source_asset

from ..config import BRANDS_FILE, PLATFORMS_FILE, PRICES_FILE, QUESTIONS_FILE
from .resources import VisibilityConfigResource


@observable_source_asset(
    group_name="config",
    description="brands.yaml, questions.yaml, platforms.yaml and prices.yaml. Observing it records the hash"
    " of the files, so a change shows in the lineage of everything built from them.",
)
def visibility_config_files(visibility_config: VisibilityConfigResource) -> DataVersion:
    config = visibility_config.load()  # validates: an invalid config fails the observation
    digest = hashlib.sha256()
    for name in (BRANDS_FILE, QUESTIONS_FILE, PLATFORMS_FILE, PRICES_FILE):
        path = config.directory / name
        digest.update(path.read_bytes() if path.exists() else b"")  # prices.yaml is optional
    return DataVersion(digest.hexdigest()[:16])
