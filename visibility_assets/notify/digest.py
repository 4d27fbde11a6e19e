"""The digest of the own brands over a week (or a day), as people read it: markdown (`visibility
digest --print`, DingTalk, WeCom), plain text and HTML (e-mail), a Feishu/Lark card, Slack
blocks, or JSON. Composed from the workspace's views by operate/digest.py; this module only
holds and renders it, every link already made."""

from __future__ import annotations

import hashlib
import html
import json
from dataclasses import asdict, dataclass
from datetime import date
from typing import Any

from visibility_assets.notify.formats import OutgoingRequest, dingtalk_sign, feishu_sign

PERIOD_DAYS = {"week": 7, "day": 1}  # the digest's periods and the days each covers

OPEN_LABEL = "Open the workspace"
WECOM_MAX_BYTES = 4096  # a WeCom markdown message's limit
SLACK_MAX_TEXT = 2900  # a section block's text holds 3,000 characters


@dataclass(frozen=True)
class Item:
    text: str
    url: str | None = None  # into the workspace


@dataclass(frozen=True)
class Figure:  # the brand's heading links to the overview they are read from
    label: str
    value: str  # with its 95% interval
    change: str | None  # the change against the period before, said only when significant
    accuracy: str = ""  # how accurate the labels under it are measured to be (the accuracy ledger)


# What each brand's part lists after its figures, in this order, with its heading.
SECTIONS = (("changes", "Significant changes"),
            ("gaps", "New gaps: questions whose answers name competitors and never the brand"),
            ("untracked", "New names the catalog does not track"),
            ("advised_against", "Answers that advise against the brand"))


@dataclass(frozen=True)
class BrandDigest:
    brand: str
    category: str
    url: str | None
    figures: tuple[Figure, ...]
    changes: tuple[Item, ...]
    gaps: tuple[Item, ...]
    untracked: tuple[Item, ...]
    advised_against: tuple[Item, ...]
    notes: tuple[str, ...] = ()  # what is left out and why (a sentiment share not measured well enough)


@dataclass(frozen=True)
class Digest:
    period: str  # week | day
    start: date
    end: date
    previous: tuple[date, date]
    brands: tuple[BrandDigest, ...]
    workspace_url: str | None

    @property
    def title(self) -> str:
        span = f"{self.start} – {self.end}" if self.start != self.end else str(self.end)
        return f"AI visibility {'weekly' if self.period == 'week' else 'daily'} digest, {span}"

    @property
    def message_id(self) -> str:
        return hashlib.sha256(f"digest|{self.period}|{self.start}|{self.end}".encode()).hexdigest()

    def markdown(self) -> str:
        return _document(self, _md_link, heading="### ", bold="**")

    def text(self) -> str:
        return _document(self, lambda item: f"{item.text} <{item.url}>" if item.url else item.text, heading="", bold="")

    def html(self) -> str:
        parts = [f"<h1>{html.escape(self.title)}</h1>",
                 f"<p>Compared with {self.previous[0]} – {self.previous[1]}. Every figure with its 95% interval;"
                 " a change is shown only when the alerts' test calls it significant.</p>"]
        for brand in self.brands:
            parts.append(f"<h2>{_html_link(Item(f'{brand.brand} ({brand.category})', brand.url))}</h2><ul>")
            parts += [f"<li>{html.escape(f.label)}: {html.escape(f.value)}"
                      f"{' · <strong>' + html.escape(f.change) + '</strong>' if f.change else ''}"
                      f"{' <small>— ' + html.escape(f.accuracy) + '</small>' if f.accuracy else ''}</li>"
                      for f in brand.figures]
            parts.append("</ul>")
            for key, heading in SECTIONS:
                items = getattr(brand, key)
                parts.append(f"<h3>{html.escape(heading)}</h3>")
                parts.append("<ul>" + "".join(f"<li>{_html_link(i)}</li>" for i in items) + "</ul>" if items
                             else "<p>None.</p>")
            parts += [f"<p><em>{html.escape(note)}</em></p>" for note in brand.notes]
        if self.workspace_url:
            parts.append(f'<p><a href="{html.escape(self.workspace_url)}">{OPEN_LABEL}</a></p>')
        return ('<!doctype html><html><body style="font-family: sans-serif; max-width: 860px">'
                + "\n".join(parts) + "</body></html>")

    def as_json(self) -> dict[str, Any]:
        return json.loads(json.dumps(asdict(self), default=str))


def _document(digest: Digest, link, heading: str, bold: str) -> str:
    lines = [f"{'## ' if heading else ''}{digest.title}", "",
             f"Compared with {digest.previous[0]} – {digest.previous[1]}. Every figure with its 95% interval;"
             " a change is shown only when the alerts' test calls it significant.", ""]
    for brand in digest.brands:
        lines += [f"{heading}{link(Item(f'{brand.brand} ({brand.category})', brand.url))}", ""]
        lines += ["- " + _figure_line(f, bold) for f in brand.figures]
        for key, title in SECTIONS:
            items = getattr(brand, key)
            lines += ["", f"{bold}{title}{bold}"] + ([f"- {link(i)}" for i in items] or ["- none"])
        lines += [""] + [f"_{note}_" if bold else note for note in brand.notes]
        lines.append("")
    return "\n".join(lines).rstrip() + "\n"


def _figure_line(figure: Figure, bold: str) -> str:
    change = f" · {bold}{figure.change}{bold}" if figure.change else ""
    return f"{figure.label}: {figure.value}{change}" + (f" — {figure.accuracy}" if figure.accuracy else "")


def _md_link(item: Item) -> str:
    return f"[{item.text}]({item.url})" if item.url else item.text


def _html_link(item: Item) -> str:
    text = html.escape(item.text)
    return f'<a href="{html.escape(item.url)}">{text}</a>' if item.url else text


# --- webhooks: the same formats as the alerts (notify/formats.py), with the digest's sections ----

def render_digest(format: str, digest: Digest, secret: str | None, now: float) -> OutgoingRequest:
    try:
        return _RENDERERS[format](digest, secret, now)
    except KeyError:
        raise ValueError(f"unknown webhook format {format!r}") from None


def _feishu(digest: Digest, secret: str | None, now: float) -> OutgoingRequest:
    elements: list[dict[str, Any]] = [{"tag": "div", "text": {"tag": "lark_md", "content": _brand_md(brand)}}
                                      for brand in digest.brands]
    if digest.workspace_url:
        elements.append({"tag": "action", "actions": [{"tag": "button", "type": "primary", "url": digest.workspace_url,
                                                       "text": {"tag": "plain_text", "content": OPEN_LABEL}}]})
    card = {"config": {"wide_screen_mode": True},
            "header": {"title": {"tag": "plain_text", "content": digest.title}, "template": "blue"},
            "elements": elements}
    body: dict[str, Any] = {"msg_type": "interactive", "card": card}
    if secret:
        timestamp = str(int(now))
        body = {"timestamp": timestamp, "sign": feishu_sign(secret, timestamp), **body}
    return OutgoingRequest({}, body)


def _dingtalk(digest: Digest, secret: str | None, now: float) -> OutgoingRequest:
    # DingTalk's markdown joins single newlines: blank lines keep the lines apart.
    text = digest.markdown().replace("\n", "\n\n")
    params: dict[str, str] = {}
    if secret:
        timestamp = str(int(now * 1000))
        params = {"timestamp": timestamp, "sign": dingtalk_sign(secret, timestamp)}
    return OutgoingRequest(params, {"msgtype": "markdown", "markdown": {"title": digest.title, "text": text}})


def _wecom(digest: Digest, secret: str | None, now: float) -> OutgoingRequest:
    text = f"**{digest.title}**\n" + "\n".join(_brand_md(brand) for brand in digest.brands)
    more = f"\n[{OPEN_LABEL}]({digest.workspace_url})" if digest.workspace_url else ""
    return OutgoingRequest({}, {"msgtype": "markdown", "markdown": {"content": _clip_bytes(text, more)}})


def _slack(digest: Digest, secret: str | None, now: float) -> OutgoingRequest:
    blocks: list[dict[str, Any]] = [{"type": "header", "text": {"type": "plain_text", "text": digest.title[:150]}}]
    for brand in digest.brands:
        text = _brand_md(brand, link=_slack_link, bold="*")
        blocks.append({"type": "section", "text": {"type": "mrkdwn", "text": text[:SLACK_MAX_TEXT]}})
    if digest.workspace_url:
        blocks.append({"type": "section", "text": {"type": "mrkdwn",
                                                   "text": f"<{digest.workspace_url}|{OPEN_LABEL}>"}})
    return OutgoingRequest({}, {"text": _slack_escape(digest.title), "blocks": blocks})


def _json(digest: Digest, secret: str | None, now: float) -> OutgoingRequest:
    return OutgoingRequest({}, {"digest_id": digest.message_id, "title": digest.title, **digest.as_json()})


def _brand_md(brand: BrandDigest, link=_md_link, bold: str = "**") -> str:
    lines = [f"{bold}{link(Item(f'{brand.brand} ({brand.category})', brand.url))}{bold}"]
    lines += ["• " + _figure_line(f, bold) for f in brand.figures]
    for key, title in SECTIONS:
        items = getattr(brand, key)
        if items:
            lines += [f"{bold}{title}{bold}"] + [f"• {link(i)}" for i in items]
    return "\n".join(lines + list(brand.notes))


def _slack_link(item: Item) -> str:
    text = _slack_escape(item.text)
    return f"<{item.url}|{text}>" if item.url else text


def _slack_escape(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def _clip_bytes(text: str, tail: str) -> str:
    room = WECOM_MAX_BYTES - len(tail.encode()) - len("\n…".encode())
    if len((text + tail).encode()) <= WECOM_MAX_BYTES:
        return text + tail
    return text.encode()[:room].decode(errors="ignore") + "\n…" + tail


_RENDERERS = {"feishu": _feishu, "lark": _feishu, "dingtalk": _dingtalk, "wecom": _wecom, "slack": _slack,
              "json": _json}
