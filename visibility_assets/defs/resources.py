"""Dagster resources: the config, the data directory and the collector's settings, each with
typed methods for the assets, schedules and sensors."""

from collections.abc import Callable
from pathlib import Path

from dagster import ConfigurableResource
from pydantic import Field

from ..analyze.analyzer import MAX_ANSWER_CHARS
from ..collect.client import RetrySettings
from ..collect.collector import CollectionSettings, PartitionOutcome, collect_partitions
from ..collect.plan import TaskRequests
from ..config import VisibilityConfig, load_config
from ..paths import data_dir, lake_settings
from ..warehouse.resource import WarehouseResource


class VisibilityConfigResource(ConfigurableResource):
    """The folder of brands.yaml, questions.yaml and platforms.yaml the definitions were built from."""

    config_dir: str
    # Answers longer than this are analysed only up to it (cleaned_samples.analysis_capped), so
    # that one runaway answer cannot stall a partition's cleaning.
    max_answer_chars: int = Field(default=MAX_ANSWER_CHARS, ge=1_000, le=10_000_000)

    def load(self) -> VisibilityConfig:
        return load_config(self.config_dir)


class DataDirResource(ConfigurableResource):
    """Where the product keeps its files: `./.visibility/` or $VISIBILITY_HOME."""

    path: str

    def reports_dir(self) -> Path:
        return Path(self.path) / "reports"


class CollectorResource(ConfigurableResource):
    """How hard to try: per-request retries, the failure share a partition tolerates, the breaker."""

    max_attempts: int = 6
    base_delay_s: float = 0.5
    max_delay_s: float = 30.0
    max_wait_s: float = 90.0  # the longest Retry-After waited out; longer leaves requests pending
    failure_share_limit: float = 0.1
    breaker_consecutive_failures: int = 5
    timeout_s: float | None = None  # overrides each platform's timeout_s when set

    def collect(self, config: VisibilityConfig, partitions: list[tuple[str, str]], run_id: str,
                warehouse: WarehouseResource, deadline: float | None = None,
                log: Callable[[str], None] = print, task: TaskRequests | None = None) -> list[PartitionOutcome]:
        settings = CollectionSettings(
            retry=RetrySettings(self.max_attempts, self.base_delay_s, self.max_delay_s, self.max_wait_s),
            deadline=deadline,
            failure_share_limit=self.failure_share_limit,
            breaker_consecutive_failures=self.breaker_consecutive_failures,
            timeout_s=self.timeout_s,
        )
        return collect_partitions(config, partitions, run_id, warehouse.settings(), settings, log, task)


def build_resources(config: VisibilityConfig) -> dict:
    """The resources of a code location built from `config`, with its files under the data directory."""
    home = data_dir()
    return {
        "visibility_config": VisibilityConfigResource(config_dir=str(config.directory)),
        "data_dir": DataDirResource(path=str(home)),
        "collector": CollectorResource(),
        "warehouse": WarehouseResource.from_settings(lake_settings()),
    }
