"""Alerts to chat webhooks (Feishu/Lark, DingTalk, WeCom, Slack, generic JSON).

message.py turns a `visibility_alerts` row into an AlertMessage, formats.py renders it in each
service's documented webhook format, webhooks.py delivers it with retries, and deliveries.py
records what was delivered so that no alert reaches the same webhook twice. No Dagster here.
"""

from __future__ import annotations

from .deliveries import (
           NOTIFICATION_DELIVERIES,
           Warehouse,
           delivered_ids,
           notify,
           record,
)
from .formats import OutgoingRequest, render
from .message import AlertMessage
from .webhooks import Delivery, deliver

__all__ = ["NOTIFICATION_DELIVERIES", "AlertMessage", "Delivery", "OutgoingRequest", "Warehouse", "deliver",
           "delivered_ids", "notify", "record", "render"]
