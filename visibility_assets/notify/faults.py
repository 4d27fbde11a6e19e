"""Faults that are no rate alert, as messages: a failed run, a replay that reads too many answers
otherwise, a webhook that refused. Each is a row of `fault_events` and goes to the webhooks
routed for its class (core/faults.py), as an alert does; the formats read both alike.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

import duckdb

from visibility_assets.core.faults import FAULT_CLASSES
from visibility_assets.notify.message import plain_lines
from visibility_assets.warehouse.db import ensure_table, has_tables, insert_batch
from visibility_assets.warehouse.tables import FAULT_EVENTS

KIND_TITLES = {"run_failed": "run failed", "replay_diff": "analyzer reads answers differently",
               "webhook_failed": "webhook failed"}
MAX_DETAIL_CHARS = 1500  # a chat message, not a log


@dataclass(frozen=True)
class FaultMessage:
    date: dt.date
    platform: str | None
    kind: str  # run_failed | replay_diff | webhook_failed
    fault_class: str  # source | rule | downstream
    subject: str  # the job, the analyzer version, the webhook
    detail: str
    run_id: str | None = None
    report_url: str | None = None
    fault_id: str = ""  # what it is about; derived when not given

    def __post_init__(self) -> None:
        if self.fault_class not in FAULT_CLASSES:
            raise ValueError(f"unknown fault class {self.fault_class!r}")
        if not self.fault_id:
            key = json.dumps([self.kind, self.date.isoformat(), self.platform or "", self.subject, self.run_id or ""],
                             ensure_ascii=False)
            object.__setattr__(self, "fault_id", hashlib.sha256(key.encode()).hexdigest())

    @classmethod
    def from_row(cls, row: Mapping[str, Any], report_url: str | None = None) -> FaultMessage:
        return cls(date=row["date"], platform=row.get("platform"), kind=row["kind"], fault_class=row["fault_class"],
                   subject=row["subject"], detail=row["detail"], run_id=row.get("run_id"), report_url=report_url,
                   fault_id=row["fault_id"])

    @property
    def alert_id(self) -> str:  # the deliveries ledger's key, as an alert's
        return self.fault_id

    @property
    def message_id(self) -> str:
        return self.fault_id

    good_news = False

    @property
    def title(self) -> str:
        where = f" on {self.platform}" if self.platform else ""
        return (f"{self.fault_class} fault: {KIND_TITLES.get(self.kind, self.kind)}{where}"
                f" ({self.date.isoformat()})")

    def facts(self) -> list[tuple[str, str]]:
        facts = [("Class", self.fault_class), ("What", self.subject)]
        if self.platform:
            facts.insert(1, ("Platform", self.platform))
        facts.append(("Detail", _clip(self.detail)))
        if self.run_id:
            facts.append(("Run", self.run_id))
        return facts

    def lines(self) -> list[str]:
        return plain_lines(self.facts(), self.report_url)

    def fields(self) -> dict[str, Any]:
        return {"date": self.date.isoformat(), "platform": self.platform, "kind": self.kind,
                "fault_class": self.fault_class, "subject": self.subject, "detail": _clip(self.detail),
                "run_id": self.run_id, "report_url": self.report_url}

    def row(self, occurred_at: dt.datetime) -> tuple:
        return (self.fault_id, self.date, self.platform, self.kind, self.fault_class, self.subject, self.detail,
                self.run_id, occurred_at)


def record_faults(conn: duckdb.DuckDBPyConnection, faults: Iterable[FaultMessage]) -> None:
    """Store each fault once (a fault already stored keeps its first row)."""
    ensure_table(conn, FAULT_EVENTS)
    known = {fault_id for (fault_id,) in conn.execute("SELECT fault_id FROM fault_events").fetchall()}
    now = dt.datetime.now(dt.UTC)
    rows = [f.row(now) for f in {f.fault_id: f for f in faults}.values() if f.fault_id not in known]
    if rows:
        insert_batch(conn, FAULT_EVENTS, FAULT_EVENTS.batch(rows))


PARTITION_FAULTS = """
SELECT * FROM fault_events
WHERE (date, platform) IN (SELECT date, platform FROM run_partitions)
ORDER BY occurred_at
"""


def partition_faults(conn: duckdb.DuckDBPyConnection, report_url: str | None) -> list[FaultMessage]:
    """The faults of the run's partitions (run_partitions filled), as messages."""
    if not has_tables(conn, FAULT_EVENTS.name):
        return []
    return [FaultMessage.from_row(row, report_url)
            for row in conn.execute(PARTITION_FAULTS).fetch_arrow_table().to_pylist()]


def _clip(text: str) -> str:
    return text if len(text) <= MAX_DETAIL_CHARS else text[:MAX_DETAIL_CHARS - 1] + "…"
