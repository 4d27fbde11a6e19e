"""The digest of the brands brands.yaml marks `own`, composed from the workspace's own views (the
same read layer as every page, report, export and MCP tool), and sent where events.yaml routes
digests: webhooks (cards) and e-mail (text and HTML).

Per brand: the headline figures pooled over the platforms with their 95% intervals, each with its
change only when the alerts' test calls it significant; the significant changes, pooled and per
platform; the new gaps (questions whose answers name competitors and never the brand, not gaps
the period before); the names the catalog does not track first seen in the period; and the
answers that advise against the brand. Each links into the workspace."""

from __future__ import annotations

import os
from dataclasses import dataclass
from datetime import date, timedelta
from urllib.parse import urlencode

import httpx

from visibility_assets.config import VisibilityConfig
from visibility_assets.measure.metric_catalog import metric_catalog
from visibility_assets.notify.digest import PERIOD_DAYS, BrandDigest, Digest, Figure, Item, render_digest
from visibility_assets.notify.email import email_message, send_email
from visibility_assets.notify.webhooks import deliver
from visibility_assets.serve.accounts import User
from visibility_assets.serve.workspace import ViewCall, Workspace

# The figures a brand team reads first; the sentiment shares join them only as headline figures.
HEADLINE = ("mention_rate", "share_of_voice", "avg_list_rank", "top3_rate", "recommend_rate", "negative_rate")
SENTIMENT = ("positive_rate", "negative_sentiment_rate")
MAX_ITEMS = 8  # per section: the rest is a link away
SERVE_URL_ENV = "VISIBILITY_SERVE_URL"
READER = User("digest", "analyst")  # it lists the advised-against answers (never their text)


def compose_digest(workspace: Workspace, period: str = "week", end: date | None = None) -> Digest:
    """The digest of the period ending `end` (default: the latest day measured)."""
    config = workspace.config
    base = workspace_url(config)
    own = [b for b in config.catalog.brands if b.own]
    brands = tuple(_brand(workspace, base, brand.name, brand.category, period, end) for brand in own)
    first = brands[0] if brands else None
    start, last = (first.start, first.end) if first else (end or date.today(),) * 2
    return Digest(period, start, last, (start - timedelta(days=(last - start).days + 1), start - timedelta(days=1)),
                  tuple(b.digest for b in brands), base)


def workspace_url(config: VisibilityConfig) -> str | None:
    url = config.notifications.workspace_url or os.environ.get(SERVE_URL_ENV, "").strip() or None
    return url.rstrip("/") if url else None


@dataclass(frozen=True)
class _Composed:
    digest: BrandDigest
    start: date
    end: date


def _brand(workspace: Workspace, base: str | None, brand: str, category: str, period: str,
           end: date | None) -> _Composed:
    query = {"brand": brand, "category": category, **({"to": end.isoformat()} if end else {})}
    overview = _view(workspace, "overview", query, PERIOD_DAYS[period])
    filters = overview["filters"]
    scope = {**query, "from": filters.start.isoformat(), "to": filters.end.isoformat()}

    def link(view: str, **extra) -> str:
        return f"{base or ''}/{view}?{urlencode({**scope, **extra})}"

    rows = overview["tables"]["figures"].rows
    headline = HEADLINE + (SENTIMENT if overview["sentiment_headline"]["headline"] else ())
    by_name = {m.name: m for m in metric_catalog()}
    pooled = {row["metric"]: row for row in rows if row["platform"] == "all"}
    accuracy = overview["accuracy"]  # metric -> the ledger's entries for the labels under it
    figures = tuple(_figure(by_name[name], pooled[name], accuracy.get(name, ()))
                    for name in headline if name in pooled)
    changes = tuple(Item(f"{by_name[row['metric']].label}{'' if row['platform'] == 'all' else ' on ' + row['platform']}:"
                         f" {_value(by_name[row['metric']], row)}, {_change(by_name[row['metric']], row)}",
                         link("overview", **({} if row["platform"] == "all" else {"platform": row["platform"]})))
                    for row in sorted(rows, key=lambda r: -abs(r["change"] or 0))
                    if row["significant"] and row["metric"] in by_name)
    notes = () if overview["sentiment_headline"]["headline"] else (
        f"Sentiment shares are left out: {overview['sentiment_headline']['reason']}.",)
    digest = BrandDigest(brand, category, link("overview"), figures, changes[:MAX_ITEMS],
                         _new_gaps(workspace, scope, filters, link), _untracked(overview, link),
                         _advised_against(workspace, scope, link), notes)
    return _Composed(digest, filters.start, filters.end)


def _view(workspace: Workspace, name: str, query: dict, days: int = 7) -> dict:
    return workspace.view_data(name, ViewCall(query, READER, workspace.reviews, days))


def _new_gaps(workspace: Workspace, scope: dict, filters, link) -> tuple[Item, ...]:
    now = _view(workspace, "questions", scope)["tables"]["gaps"].rows
    before_from, before_to = filters.previous
    before = {row["question_id"] for row in _view(workspace, "questions", {
        **scope, "from": before_from.isoformat(), "to": before_to.isoformat()})["tables"]["gaps"].rows}
    return tuple(Item(f"{row['question_id']} {row['question']}: {', '.join(row['competitors_named'][:3])}",
                      link("answers", question=row["question_id"]))
                 for row in now if row["question_id"] not in before)[:MAX_ITEMS]


def _untracked(overview: dict, link) -> tuple[Item, ...]:
    rows = [row for row in overview["tables"]["also_recommended"].rows if row.get("new")]
    return tuple(Item(f"{row['name']}: in {row['answers']} answers ({row['share']:.1%}), first seen {row['first_seen']}"
                      f" on {row['platforms']}", link("overview") + "#also-recommended") for row in rows)[:MAX_ITEMS]


def _advised_against(workspace: Workspace, scope: dict, link) -> tuple[Item, ...]:
    found = _view(workspace, "answers", {**scope, "named": "against"})
    items = [Item(f"{row['date']} {row['platform']} {row['question_id']} (round {row['round']})",
                  link("answers", named="against", question=row["question_id"], platform=row["platform"]))
             for row in found["tables"]["answers"].rows[:MAX_ITEMS]]
    if found["total"] > len(items):
        items.append(Item(f"all {found['total']} answers that advise against it", link("answers", named="against")))
    return tuple(items)


def _figure(metric, row: dict, accuracy) -> Figure:
    return Figure(metric.label, _value(metric, row), _change(metric, row) if row["significant"] else None,
                  "; ".join(entry["short"] for entry in accuracy))


def _value(metric, row: dict) -> str:
    if row["value"] is None:
        return "no answers"
    if metric.kind == "share":
        return f"{row['value']:.1%} ({row['low']:.1%}–{row['high']:.1%})"
    return f"{row['value']:.2f} ({row['low']:.2f}–{row['high']:.2f})"


def _change(metric, row: dict) -> str:
    if row["change"] is None or row["previous"] is None:
        return "no earlier figure"
    if metric.kind == "share":
        return f"{row['change'] * 100:+.1f} pts from {row['previous']:.1%}"
    return f"{row['change']:+.2f} from {row['previous']:.2f}"


@dataclass(frozen=True)
class Sent:
    where: str  # webhook NAME or email
    delivered: bool
    detail: str


def send_digest(config: VisibilityConfig, digest: Digest, client: httpx.Client | None = None) -> list[Sent]:
    """The digest to every webhook and mailbox events.yaml routes digests to."""
    routes = config.notifications.digests
    webhooks = {w.name: w for w in config.notifications.webhooks}
    sent = []
    with client or httpx.Client() as http:
        for name in routes.webhooks:
            delivery = deliver(webhooks[name], digest, http, render=render_digest)
            sent.append(Sent(f"webhook {name}", delivery.state == "delivered",
                             delivery.error or f"{delivery.state} after {delivery.attempts} attempt(s)"))
    if routes.email is not None:
        mailed = send_email(routes.email, email_message(routes.email, digest.title, digest.text(), digest.html()))
        sent.append(Sent("email", mailed.delivered,
                         mailed.error or f"to {', '.join(mailed.recipients)} ({mailed.attempts} attempt(s))"))
    return sent
