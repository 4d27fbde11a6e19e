"""The one partitioning of the pipeline: day (Asia/Shanghai) x platform from the config."""

from __future__ import annotations

from dagster import DailyPartitionsDefinition, MultiPartitionKey, MultiPartitionsDefinition, StaticPartitionsDefinition

from ..config import load_config

TIMEZONE = "Asia/Shanghai"
FIRST_DAY = "2025-01-01"
DATE, PLATFORM = "date", "platform"

date_partitions = DailyPartitionsDefinition(start_date=FIRST_DAY, timezone=TIMEZONE)
platform_partitions = StaticPartitionsDefinition(load_config().platform_names)
daily_platform_partitions = MultiPartitionsDefinition({DATE: date_partitions, PLATFORM: platform_partitions})


def partition_key(date: str, platform: str) -> MultiPartitionKey:
    return MultiPartitionKey({DATE: date, PLATFORM: platform})


def split_partition_key(key: str) -> tuple[str, str]:
    """(date, platform) of a key such as "2026-11-01|deepseek" (dimensions sorted by name)."""
    keys = daily_platform_partitions.get_partition_key_from_str(key).keys_by_dimension
    return keys[DATE], keys[PLATFORM]


def partition_tags(date: str, platform: str) -> dict[str, str]:
    """Run tags for one partition; tag concurrency limits key on dagster/partition/platform."""
    return dict(daily_platform_partitions.get_tags_for_partition_key(partition_key(date, platform)))
