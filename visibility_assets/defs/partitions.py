"""The one partitioning of the pipeline: day (Asia/Shanghai) x platform, the platforms taken
from the config the definitions are built with."""

from collections.abc import Sequence

from dagster import DailyPartitionsDefinition, MultiPartitionKey, MultiPartitionsDefinition, StaticPartitionsDefinition

from ..days import TIMEZONE

FIRST_DAY = "2025-01-01"
DATE, PLATFORM = "date", "platform"


def daily_platform_partitions(platform_names: Sequence[str]) -> MultiPartitionsDefinition:
    return MultiPartitionsDefinition({
        DATE: DailyPartitionsDefinition(start_date=FIRST_DAY, timezone=TIMEZONE),
        PLATFORM: StaticPartitionsDefinition(list(platform_names)),
    })


def partition_key(date: str, platform: str) -> MultiPartitionKey:
    return MultiPartitionKey({DATE: date, PLATFORM: platform})


def split_partition_key(key: str) -> tuple[str, str]:
    """(date, platform) of a key such as "2026-11-01|deepseek" (dimensions sorted by name)."""
    if isinstance(key, MultiPartitionKey):
        return key.keys_by_dimension[DATE], key.keys_by_dimension[PLATFORM]
    day, platform = str(key).split("|")
    return day, platform


def partition_tags(date: str, platform: str) -> dict[str, str]:
    """The run tags Dagster gives a run of one partition; tag concurrency limits key on
    dagster/partition/platform."""
    return {"dagster/partition": str(partition_key(date, platform)),
            f"dagster/partition/{DATE}": date, f"dagster/partition/{PLATFORM}": platform}

