"""An AlertMessage as each service's webhook wants it, signed where the service signs.

- Feishu / Lark custom bot: `{"msg_type": "interactive", "card": {...}}` (a card of the JSON 1.0
  form: header, a lark_md div, a button to the report). With signature verification on, the body
  also carries `timestamp` (seconds) and `sign` = base64(HMAC-SHA256(key=f"{timestamp}\\n{secret}",
  msg=b"")): the key is the string to sign and the message is empty, unlike DingTalk.
- DingTalk custom robot: `{"msgtype": "markdown", "markdown": {"title", "text"}}`. With "加签" on,
  the URL gets `timestamp` (milliseconds) and `sign` = urlencode(base64(HMAC-SHA256(key=secret,
  msg=f"{timestamp}\\n{secret}"))).
- WeCom group robot: `{"msgtype": "markdown", "markdown": {"content"}}` (at most 4096 bytes).
- Slack incoming webhook: `{"text": fallback, "blocks": [section blocks with mrkdwn]}`.
- json: the alert's columns as one flat object, with alert_id and title.

Timestamps expire (an hour for both Feishu and DingTalk), so a request is rendered again for
every attempt.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from visibility_assets.notify.message import AlertMessage

REPORT_LABEL = "Open report"


@dataclass(frozen=True)
class OutgoingRequest:
    # Query parameters added to the webhook URL's own, unencoded: the HTTP client percent-encodes
    # them once (so DingTalk receives its sign url-encoded, as documented).
    params: dict[str, str] = field(default_factory=dict)
    json: dict[str, Any] = field(default_factory=dict)


def render(format: str, message: AlertMessage, secret: str | None, now: float) -> OutgoingRequest:
    """The request for `format` (a Webhook.format); `now` is the epoch time in seconds."""
    try:
        renderer = RENDERERS[format]
    except KeyError:
        raise ValueError(f"unknown webhook format {format!r}") from None
    return renderer(message, secret, now)


def feishu_sign(secret: str, timestamp: str) -> str:
    string_to_sign = f"{timestamp}\n{secret}".encode()
    return base64.b64encode(hmac.new(string_to_sign, b"", hashlib.sha256).digest()).decode()


def dingtalk_sign(secret: str, timestamp: str) -> str:
    """The base64 signature; it goes into the query string, which url-encodes it."""
    string_to_sign = f"{timestamp}\n{secret}".encode()
    return base64.b64encode(hmac.new(secret.encode(), string_to_sign, hashlib.sha256).digest()).decode()


def _feishu(message: AlertMessage, secret: str | None, now: float) -> OutgoingRequest:
    text = "\n".join(f"**{label}**: {value}" for label, value in message.facts())
    elements: list[dict[str, Any]] = [{"tag": "div", "text": {"tag": "lark_md", "content": text}}]
    if message.report_url:
        elements.append({"tag": "action", "actions": [{
            "tag": "button", "text": {"tag": "plain_text", "content": REPORT_LABEL}, "type": "primary",
            "url": message.report_url}]})
    card = {
        "config": {"wide_screen_mode": True},
        "header": {"title": {"tag": "plain_text", "content": message.title},
                   "template": "green" if message.good_news else "red"},
        "elements": elements,
    }
    body: dict[str, Any] = {"msg_type": "interactive", "card": card}
    if secret:
        timestamp = str(int(now))
        body = {"timestamp": timestamp, "sign": feishu_sign(secret, timestamp), **body}
    return OutgoingRequest({}, body)


def _dingtalk(message: AlertMessage, secret: str | None, now: float) -> OutgoingRequest:
    # DingTalk's markdown joins single newlines: a blank line between facts keeps them apart.
    parts = [f"#### {message.title}"] + [f"**{label}**: {value}" for label, value in message.facts()]
    if message.report_url:
        parts.append(f"[{REPORT_LABEL}]({message.report_url})")
    body = {"msgtype": "markdown", "markdown": {"title": message.title, "text": "\n\n".join(parts)}}
    params: dict[str, str] = {}
    if secret:
        timestamp = str(int(now * 1000))
        params = {"timestamp": timestamp, "sign": dingtalk_sign(secret, timestamp)}
    return OutgoingRequest(params, body)


def _wecom(message: AlertMessage, secret: str | None, now: float) -> OutgoingRequest:
    # WeCom markdown has three font colours: info (green), comment (grey), warning (orange).
    colour = "info" if message.good_news else "warning"
    lines = [f"**{message.title}**"]
    for label, value in message.facts():
        shown = f'<font color="{colour}">{value}</font>' if label == "Change" else value
        lines.append(f"> {label}: {shown}")
    if message.report_url:
        lines.append(f"[{REPORT_LABEL}]({message.report_url})")
    return OutgoingRequest({}, {"msgtype": "markdown", "markdown": {"content": "\n".join(lines)}})


def _slack(message: AlertMessage, secret: str | None, now: float) -> OutgoingRequest:
    facts = "\n".join(f"*{_slack_escape(label)}:* {_slack_escape(value)}" for label, value in message.facts())
    blocks: list[dict[str, Any]] = [
        {"type": "section", "text": {"type": "mrkdwn", "text": f"*{_slack_escape(message.title)}*"}},
        {"type": "section", "text": {"type": "mrkdwn", "text": facts}},
    ]
    if message.report_url:
        blocks.append({"type": "section", "text": {"type": "mrkdwn",
                                                   "text": f"<{message.report_url}|{REPORT_LABEL}>"}})
    # `text` is what notifications and clients without blocks show.
    fallback = "\n".join([message.title, *message.lines()])
    return OutgoingRequest({}, {"text": _slack_escape(fallback), "blocks": blocks})


def _slack_escape(text: str) -> str:
    """Slack's three control characters in mrkdwn text."""
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def _json(message: AlertMessage, secret: str | None, now: float) -> OutgoingRequest:
    return OutgoingRequest({}, {**message.fields(), "alert_id": message.alert_id, "title": message.title})


RENDERERS: dict[str, Callable[[AlertMessage, str | None, float], OutgoingRequest]] = {
    "feishu": _feishu, "lark": _feishu, "dingtalk": _dingtalk, "wecom": _wecom, "slack": _slack, "json": _json,
}
