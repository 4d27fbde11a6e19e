"""The pipeline's day: a calendar day in Asia/Shanghai, where the tracked platforms operate."""

from __future__ import annotations

from datetime import date, datetime, timedelta
from zoneinfo import ZoneInfo

TIMEZONE = "Asia/Shanghai"


def today(now: datetime | None = None) -> date:
    zone = ZoneInfo(TIMEZONE)
    return (now or datetime.now(zone)).astimezone(zone).date()


def yesterday(now: datetime | None = None) -> date:
    """The day a nightly run collects: the previous calendar day in Asia/Shanghai."""
    zone = ZoneInfo(TIMEZONE)
    return (now or datetime.now(zone)).astimezone(zone).date() - timedelta(days=1)
