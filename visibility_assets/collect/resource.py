"""The collector as a Dagster resource: how hard to try, with a typed method for the asset."""

from collections.abc import Callable

from dagster import ConfigurableResource

from visibility_assets.collect.client import RetrySettings
from visibility_assets.collect.collector import CollectionSettings, PartitionOutcome, collect_partitions
from visibility_assets.collect.plan import TaskRequests
from visibility_assets.config import VisibilityConfig
from visibility_assets.core.partitions import Partition
from visibility_assets.warehouse.resource import WarehouseResource


class CollectorResource(ConfigurableResource):
    """How hard to try: per-request retries, the failure share a partition tolerates, the breaker."""

    max_attempts: int = 6
    base_delay_s: float = 0.5
    max_delay_s: float = 30.0
    max_wait_s: float = 90.0  # the longest Retry-After waited out; longer leaves requests pending
    failure_share_limit: float = 0.1
    breaker_consecutive_failures: int = 5
    timeout_s: float | None = None  # overrides each platform's timeout_s when set

    def collect(self, config: VisibilityConfig, partitions: list[Partition], run_id: str,
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
