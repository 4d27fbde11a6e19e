"""Alerts to chat webhooks (Feishu/Lark, DingTalk, WeCom, Slack, generic JSON).

message.py turns a `visibility_alerts` row into an AlertMessage, formats.py renders it in each
service's documented webhook format, webhooks.py delivers it with retries, and deliveries.py
records what was delivered so that no alert reaches the same webhook twice. No Dagster here.
"""

from __future__ import annotations

from visibility_assets.notify.deliveries import Warehouse, delivered_ids, notify, record
from visibility_assets.notify.formats import OutgoingRequest, render
from visibility_assets.notify.message import AlertMessage
from visibility_assets.notify.webhooks import Delivery, deliver

__all__ = ["AlertMessage", "Delivery", "OutgoingRequest", "Warehouse", "deliver",
           "delivered_ids", "notify", "record", "render"]
