"""The one partitioning of the pipeline: day (Asia/Shanghai) x platform, the platforms taken
from the config the definitions are built with; and the typed partition every asset works on."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from datetime import date
from typing import NamedTuple

from dagster import DailyPartitionsDefinition, MultiPartitionKey, MultiPartitionsDefinition, StaticPartitionsDefinition

from visibility_assets.core.days import FIRST_DAY, TIMEZONE

DATE, PLATFORM = "date", "platform"


class Partition(NamedTuple):
    """One day of one platform."""

    date: date
    platform: str

    @classmethod
    def of(cls, key: str | MultiPartitionKey) -> Partition:
        """The partition of a key such as "2026-11-01|deepseek" (dimensions sorted by name)."""
        if isinstance(key, MultiPartitionKey):
            day, platform = key.keys_by_dimension[DATE], key.keys_by_dimension[PLATFORM]
        else:
            day, platform = str(key).split("|")
        return cls(date.fromisoformat(day), platform)

    @property
    def day(self) -> str:
        """The date as the collector keys its requests: YYYY-MM-DD."""
        return self.date.isoformat()


def run_partitions(partition_keys: Iterable[str]) -> list[Partition]:
    """The partitions of a run, in order, from its partition keys (one for a nightly run, a
    range for a single-run backfill): what every partitioned asset works on."""
    return sorted({Partition.of(key) for key in partition_keys})


def daily_platform_partitions(platform_names: Sequence[str]) -> MultiPartitionsDefinition:
    return MultiPartitionsDefinition({
        DATE: DailyPartitionsDefinition(start_date=FIRST_DAY.isoformat(), timezone=TIMEZONE),
        PLATFORM: StaticPartitionsDefinition(list(platform_names)),
    })


def partition_key(date: str, platform: str) -> MultiPartitionKey:
    return MultiPartitionKey({DATE: date, PLATFORM: platform})


def partition_tags(date: str, platform: str) -> dict[str, str]:
    """The run tags Dagster gives a run of one partition; tag concurrency limits key on
    dagster/partition/platform."""
    return {"dagster/partition": str(partition_key(date, platform)),
            f"dagster/partition/{DATE}": date, f"dagster/partition/{PLATFORM}": platform}
