"""What went to which webhook, so that an alert never reaches the same webhook twice.

`notification_deliveries` is a ledger: one row per alert, webhook and run that tried it
(delivered, failed or skipped). A run sends an alert to a webhook unless a row says it was
delivered there, so failed and skipped ones are tried again by the next run, and re-runs that
recompute the same alerts (same alert_id) send nothing. Two runs notifying at the very same
time could both send an alert; the schedules run notification once per day and partition.
"""

from __future__ import annotations

import datetime as dt
import time
from collections.abc import Callable, Iterable, Sequence
from contextlib import AbstractContextManager
from typing import Any, Protocol

import duckdb
import httpx

from visibility_assets.config.events import Webhook
from visibility_assets.core.faults import DOWNSTREAM
from visibility_assets.notify.faults import FaultMessage, record_faults
from visibility_assets.notify.message import AlertMessage
from visibility_assets.notify.webhooks import DELIVERED, FAILED, Delivery, deliver, url_host

Message = AlertMessage | FaultMessage  # what a webhook receives; the formats read both alike
from visibility_assets.warehouse.db import ensure_table, has_tables, insert_batch
from visibility_assets.warehouse.tables import NOTIFICATION_DELIVERIES


class Warehouse(Protocol):
    """The two operations notify needs; WarehouseResource has both."""

    def write(self, work: Callable[[duckdb.DuckDBPyConnection], Any]) -> Any:
        """Run `work(conn)` in one transaction."""

    def read_only(self) -> AbstractContextManager[duckdb.DuckDBPyConnection]:
        """A read-only connection."""


def delivered_ids(conn: duckdb.DuckDBPyConnection, webhook_names: Sequence[str],
                  alert_ids: Sequence[str] | None = None) -> set[tuple[str, str]]:
    """(alert_id, webhook) pairs already delivered, among these webhooks (and alerts, if given)."""
    if not webhook_names or alert_ids is not None and not alert_ids:
        return set()
    if not has_tables(conn, NOTIFICATION_DELIVERIES.name):  # nothing was ever sent
        return set()
    sql = ("SELECT DISTINCT alert_id, webhook FROM " + NOTIFICATION_DELIVERIES.name
           + " WHERE state = $delivered AND list_contains($webhooks, webhook)")
    params: dict[str, Any] = {"delivered": DELIVERED, "webhooks": list(webhook_names)}
    if alert_ids is not None:
        sql += " AND list_contains($alert_ids, alert_id)"
        params["alert_ids"] = list(alert_ids)
    return {(alert_id, webhook) for alert_id, webhook in conn.execute(sql, params).fetchall()}


def record(conn: duckdb.DuckDBPyConnection, deliveries: Sequence[Delivery], messages: Iterable[Message],
           run_id: str) -> None:
    """Append the outcomes (of every state) to notification_deliveries, creating it if needed."""
    ensure_table(conn, NOTIFICATION_DELIVERIES)
    by_id = {message.alert_id: message for message in messages}
    rows = []
    for d in deliveries:
        m = by_id[d.alert_id]
        rows.append((d.alert_id, d.webhook, m.date, m.platform or "", m.kind, m.subject, d.state, d.attempts,
                     d.http_status, d.error, _timestamp(d.first_attempt_at), _timestamp(d.finished_at), run_id))
    insert_batch(conn, NOTIFICATION_DELIVERIES, NOTIFICATION_DELIVERIES.batch(rows))


def notify(webhooks: Sequence[Webhook], messages: Sequence[Message], warehouse: Warehouse,
           client: httpx.Client, log: Any, run_id: str, sleep: Callable[[float], None] = time.sleep,
           now: Callable[[], float] = time.time) -> list[Delivery]:
    """Send each message to each webhook routed for its class that has not had it yet, record
    every outcome, and return these deliveries. A webhook that fails after its retries is itself
    a downstream fault (fault_events), told to the other webhooks routed for those."""
    deliveries = _send(webhooks, messages, warehouse, client, log, run_id, sleep, now)
    failed = [d for d in deliveries if d.state == FAILED]
    if failed:
        faults = [webhook_fault(d, run_id) for d in failed]
        warehouse.write(lambda conn: record_faults(conn, faults))
        for fault, delivery in zip(faults, failed):
            others = [w for w in webhooks if w.name != delivery.webhook]
            _send(others, [fault], warehouse, client, log, run_id, sleep, now)
    return deliveries


def _send(webhooks: Sequence[Webhook], messages: Sequence[Message], warehouse: Warehouse, client: httpx.Client,
          log: Any, run_id: str, sleep: Callable[[float], None], now: Callable[[], float]) -> list[Delivery]:
    unique = list({message.alert_id: message for message in messages}.values())
    if not webhooks or not unique:
        return []
    with warehouse.read_only() as conn:
        done = delivered_ids(conn, [w.name for w in webhooks], [m.alert_id for m in unique])
    deliveries: list[Delivery] = []
    try:
        for webhook in webhooks:
            for message in unique:
                if (message.alert_id, webhook.name) in done or message.fault_class not in webhook.classes:
                    continue
                delivery = deliver(webhook, message, client, sleep=sleep, now=now, log=log)
                _log(log, webhook, message, delivery)
                deliveries.append(delivery)
    finally:
        # Recorded even when something above raised: what was sent must not be sent again.
        if deliveries:
            warehouse.write(lambda conn: record(conn, deliveries, unique, run_id))
    return deliveries


def webhook_fault(delivery: Delivery, run_id: str) -> FaultMessage:
    """A webhook that refused after its retries: one fault per webhook and day."""
    day = dt.datetime.fromtimestamp(delivery.finished_at or time.time(), dt.UTC).date()
    status = f"HTTP {delivery.http_status}: " if delivery.http_status is not None else ""
    return FaultMessage(date=day, platform=None, kind="webhook_failed", fault_class=DOWNSTREAM,
                        subject=delivery.webhook, detail=f"{status}{delivery.error or 'failed'} after"
                        f" {delivery.attempts} attempts", run_id=run_id,
                        fault_id=f"webhook_failed:{delivery.webhook}:{day.isoformat()}")


def _log(log: Any, webhook: Webhook, message: Message, delivery: Delivery) -> None:
    # Names and ids only: the error was scrubbed by deliver, and the URL is never formatted here.
    text = (f"notification {delivery.state}: webhook {webhook.name} ({webhook.format}, {url_host(webhook.url())}), alert"
            f" {message.alert_id[:12]} ({message.title}), attempts {delivery.attempts}")
    if delivery.http_status is not None:
        text += f", HTTP {delivery.http_status}"
    if delivery.error:
        text += f": {delivery.error}"
    (log.info if delivery.state == DELIVERED else log.warning)(text)


def _timestamp(epoch: float | None) -> dt.datetime | None:
    return None if epoch is None else dt.datetime.fromtimestamp(epoch, dt.UTC)
