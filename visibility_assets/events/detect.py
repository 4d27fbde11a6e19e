"""What happened, as events: changes in visibility_alerts, questions added to questions.yaml,
a person asking. Each event's id is stable, so a second look at the same facts finds nothing new."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import date, datetime

from visibility_assets.config import VisibilityConfig
from visibility_assets.events.model import NOTIFIED, RECORDED, Event, stable_id

BORDERLINE = "borderline"


def alert_events(rows: Sequence[dict], now: datetime) -> list[Event]:
    """One event per alert row and decision. A borderline mention-rate change asks for extra
    rounds; a clear one (decision 'alert') is notified; refusal and error shares are recorded."""
    events = []
    for row in rows:
        borderline = row["decision"] == BORDERLINE
        collects = borderline and row["kind"] == "mention_rate"
        outcome = RECORDED if borderline else NOTIFIED
        events.append(Event(
            event_id=stable_id("alert", row["date"], row["platform"], row["kind"], row["category"], row["subject"],
                               row["direction"], row["decision"]),
            kind="alert", date=row["date"], platform=row["platform"], category=row["category"],
            subject=row["subject"], reason=describe_alert(row), created_at=now, change=row["change"],
            p_value=row["p_value"], q_value=row["q_value"], interval_width=row["rate_high"] - row["rate_low"],
            outcome=outcome, collects=collects))
    return events


def describe_alert(row: dict) -> str:
    what = "mention rate" if row["kind"] == "mention_rate" else row["kind"].replace("_", " ")
    return (f"{row['subject']} {what} {row['direction']} {row['change'] * 100:+.1f} pp on {row['platform']}"
            f" ({row['date']}): {row['rate']:.0%} [{row['rate_low']:.0%}, {row['rate_high']:.0%}] against"
            f" {row['baseline_rate']:.0%}, p={row['p_value']:.3g}"
            + (f", q={row['q_value']:.2f}" if row['q_value'] is not None else "") + f": {row['decision']}")


QUALITY_FIGURES = ("parse_success", "success_share")
QUALITY_DROP = 0.10  # below the trailing week's mean by this much (absolute) is a degradation


def quality_events(rows: Sequence[dict], now: datetime) -> list[Event]:
    """A collection-quality figure of a platform's day that fell against its trailing week
    (rows: date, platform, figure, value, baseline, baseline_days). Recorded for people to see;
    more samples would not fix it."""
    events = []
    for row in rows:
        if row["value"] is None or row["baseline"] is None or row["baseline_days"] < 3:
            continue
        if row["baseline"] - row["value"] < QUALITY_DROP:
            continue
        events.append(Event(
            event_id=stable_id("quality", row["date"], row["platform"], row["figure"]), kind="quality",
            date=row["date"], platform=row["platform"], category=None, subject=row["figure"],
            reason=f"{row['figure'].replace('_', ' ')} on {row['platform']} ({row['date']}) fell to"
                   f" {row['value']:.1%} from {row['baseline']:.1%} over the week before",
            created_at=now, change=row["value"] - row["baseline"], collects=False))
    return events


def new_question_events(config: VisibilityConfig, asked: dict[tuple[date, str], set[str]],
                        now: datetime) -> list[Event]:
    """For each platform's latest collected day, the questions of questions.yaml it never asked."""
    latest: dict[str, date] = {}
    for day, platform in asked:
        latest[platform] = max(day, latest.get(platform, day))
    events = []
    for platform, day in sorted(latest.items()):
        if platform not in config.platform_names:
            continue
        missing = [q for q in config.questions if q.id not in asked[(day, platform)]]
        for category in dict.fromkeys(q.category for q in missing):
            ids = [q.id for q in missing if q.category == category]
            events.append(Event(
                event_id=stable_id("new_questions", day, platform, *ids), kind="new_questions", date=day,
                platform=platform, category=category, subject=",".join(ids),
                reason=f"{len(ids)} question(s) added to questions.yaml after {platform} collected {day}:"
                       f" {', '.join(ids)}", created_at=now, question_ids=tuple(ids)))
    return events


class BadRequest(ValueError):
    """An ad-hoc request names what the config does not have."""


def adhoc_event(config: VisibilityConfig, platform: str, day: date, question_ids: Sequence[str],
                category: str | None, rounds: int, requested_by: str, now: datetime, ident: str) -> Event:
    """A person asked for these questions (or a category's, or all) on a platform for a day, N
    rounds. `ident` makes it one event however often the same launch is retried."""
    config.platform(platform)  # UnknownPlatform names the known ones
    known = {q.id for q in config.questions}
    unknown = [q for q in question_ids if q not in known]
    if unknown:
        raise BadRequest(f"unknown question id(s) {', '.join(unknown)} (questions.yaml has {len(known)},"
                         f" e.g. {', '.join(sorted(known)[:3])})")
    if category is not None and category not in config.catalog.categories:
        raise BadRequest(f"unknown category {category!r} (brands.yaml defines: {', '.join(config.catalog.categories)})")
    question_ids = list(question_ids) or [q.id for q in config.questions_of(category)]
    if not question_ids:
        raise BadRequest(f"no question of category {category!r} in questions.yaml")
    categories = {q.category for q in config.questions_of(ids=question_ids)}
    return Event(
        event_id=stable_id("adhoc", ident), kind="adhoc", date=day, platform=platform,
        category=categories.pop() if len(categories) == 1 else None, subject=",".join(question_ids),
        reason=f"{requested_by}: {len(question_ids)} question(s) x {rounds} round(s) on {platform} for {day}",
        created_at=now, question_ids=tuple(question_ids), rounds=rounds)
