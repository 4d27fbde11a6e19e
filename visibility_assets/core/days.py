"""The pipeline's day: a calendar day in Asia/Shanghai, where the tracked platforms operate."""

from __future__ import annotations

from datetime import date, datetime, timedelta
from zoneinfo import ZoneInfo

TIMEZONE = "Asia/Shanghai"
FIRST_DAY = date(2025, 1, 1)  # the first day partition


class DayOutOfRange(ValueError):
    """A day before the first partition, or one that is not over yet."""


def check_collectable(first: date, last: date, now: datetime | None = None) -> None:
    """Refuse a range of days that the partitions do not hold: from FIRST_DAY to yesterday."""
    latest = yesterday(now)
    if first < FIRST_DAY or last > latest:
        span = first.isoformat() if first == last else f"{first.isoformat()} .. {last.isoformat()}"
        raise DayOutOfRange(f"{span}: the days that can be collected run from {FIRST_DAY.isoformat()} (the first"
                            f" partition) to {latest.isoformat()} (yesterday, Asia/Shanghai)")


def today(now: datetime | None = None) -> date:
    zone = ZoneInfo(TIMEZONE)
    return (now or datetime.now(zone)).astimezone(zone).date()


def yesterday(now: datetime | None = None) -> date:
    """The day a nightly run collects: the previous calendar day in Asia/Shanghai."""
    zone = ZoneInfo(TIMEZONE)
    return (now or datetime.now(zone)).astimezone(zone).date() - timedelta(days=1)
