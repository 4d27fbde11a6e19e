"""Dagster resources: configuration held once, typed methods for the assets."""

from __future__ import annotations

from collections.abc import Callable

from dagster import ConfigurableResource

from ..collect.client import RetrySettings
from ..collect.collector import CollectionReport, CollectionSettings, collect_partition
from ..collect.journal import CollectionJournal, journal_path
from ..config import VisibilityConfig, load_config


class VisibilityConfigResource(ConfigurableResource):
    """Where the YAML config lives; None means $VISIBILITY_CONFIG_DIR or the shipped example."""

    config_dir: str | None = None

    def load(self) -> VisibilityConfig:
        return load_config(self.config_dir)


class CollectorResource(ConfigurableResource):
    """How hard to try: per-request retries, the failure share a partition tolerates, the breaker."""

    max_attempts: int = 6
    base_delay_s: float = 0.5
    max_delay_s: float = 30.0
    failure_share_limit: float = 0.1
    breaker_consecutive_failures: int = 5
    timeout_s: float | None = None  # overrides each platform's timeout_s when set

    def collect(self, config: VisibilityConfig, date: str, platform: str, run_id: str,
                deadline: float | None = None, log: Callable[[str], None] = print) -> CollectionReport:
        settings = CollectionSettings(
            retry=RetrySettings(self.max_attempts, self.base_delay_s, self.max_delay_s),
            deadline=deadline,
            failure_share_limit=self.failure_share_limit,
            breaker_consecutive_failures=self.breaker_consecutive_failures,
            timeout_s=self.timeout_s,
        )
        with CollectionJournal(journal_path(date, platform)) as journal:
            return collect_partition(config, config.platform(platform), date, run_id, journal, settings, log)
