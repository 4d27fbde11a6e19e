"""One partition's judgements: ask what was never asked, retry a reply that does not validate
once, and turn every reply into rows (judge_calls, judge_verdicts).

The calls go through the collector (pacing, retries, the billing stop, the journal, costs from
prices.yaml) as one journal partition per answering platform and day (`judge:<platform>`). A
key answered in any judge partition is read back, not sent again.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, date, datetime

from visibility_assets.collect.collector import CollectionSettings, GivenPlan, collect_partition_async
from visibility_assets.collect.journal import CollectionJournal
from visibility_assets.collect.tally import CollectionTally
from visibility_assets.config import Platform, VisibilityConfig
from visibility_assets.judge.plan import (
    JOURNAL_PREFIX,
    JudgeItem,
    journal_platform,
    judge_key,
    judge_platform,
    plan_judge_requests,
    request_key,
    sampled,
)
from visibility_assets.judge.prompt import InvalidReply, Reply, parse_reply
from visibility_assets.warehouse.lake import LakeSettings, reading

JUDGED, INVALID, UNSENT = "judged", "invalid", "unsent"

# Replies stored by other judge partitions (another day, another platform's copy of the text).
REPLIES_ELSEWHERE = """
SELECT request_key, answer_text FROM journal_answers
WHERE starts_with(platform, $prefix) AND NOT (date = $date AND platform = $platform)
  AND list_contains($keys, request_key)
"""
SPENT_TODAY = """
SELECT coalesce(sum(cost), 0) FROM journal_answers WHERE date = $date AND starts_with(platform, $prefix)
"""
OWN_REPLIES = "SELECT request_key, answer_text, cost, currency FROM journal_answers WHERE date = $date AND platform = $platform"
LAST_ERRORS = ("SELECT request_key, state, last_error FROM journal_requests"
               " WHERE date = $date AND platform = $platform AND state <> 'succeeded'")


@dataclass
class Stored:
    text: str
    cost: float | None = None
    currency: str | None = None
    reused: bool = False  # stored by another judge partition, and paid there


@dataclass
class JudgeOutcome:
    date: str
    platform: str
    calls: list[dict] = field(default_factory=list)  # rows of judge_calls
    verdicts: list[dict] = field(default_factory=list)  # rows of judge_verdicts
    reports: list[CollectionTally] = field(default_factory=list)  # one per round that sent anything
    stopped: str | None = None  # why the judge platform stopped (billing, breaker)

    @property
    def sent(self) -> int:
        return sum(r.to_send for r in self.reports)

    def count(self, status: str) -> int:
        return sum(1 for c in self.calls if c["status"] == status)


def judge_partition(config: VisibilityConfig, lake: LakeSettings, day: str, platform: str,
                    items: Sequence[JudgeItem], run_id: str, settings: CollectionSettings = CollectionSettings(),
                    log: Callable[[str], None] = lambda _: None, every_item: bool = False) -> JudgeOutcome:
    """every_item: ask about all items, not judge.yaml's share of them (a calibration)."""
    judge, judge_on = config.judge, judge_platform(config)
    assert judge is not None
    items = [i for i in items if every_item or sampled(i, judge.share)]
    keys = [judge_key(i, judge, judge_on) for i in items]
    outcome = JudgeOutcome(day, platform)
    partition = journal_platform(platform)
    all_keys = [request_key(k, r) for k in keys for r in (1, 2)]
    with reading(lake) as conn:
        elsewhere = _rows(conn, REPLIES_ELSEWHERE, {"prefix": JOURNAL_PREFIX, "date": day, "platform": partition,
                                                    "keys": all_keys})
    replies = {key: Stored(text, reused=True) for key, text in elsewhere}
    with CollectionJournal(lake, day, partition) as journal:
        def read_own_replies() -> None:
            replies.update({key: Stored(text, cost, currency)
                            for key, text, cost, currency in journal.query(OWN_REPLIES)})

        read_own_replies()  # a run before this one (the same day) answered these
        for round_ in (1, 2):
            todo = [(i, k) for i, k in zip(items, keys) if _needs(replies, k, round_, i)]
            if todo and outcome.stopped is None:
                report = _send(config, lake, journal, judge_on, day, run_id, settings, log,
                               plan_judge_requests([i for i, _ in todo], [k for _, k in todo], judge, judge_on, round_))
                outcome.reports.append(report)
                outcome.stopped = report.stopped
                read_own_replies()
        errors = {key: (state, error) for key, state, error in journal.query(LAST_ERRORS)}
    judged_at = datetime.now(UTC)
    for item, key in zip(items, keys):
        _rows_of(outcome, item, key, replies, errors, judge_on, judge.prompt_version, judged_at, run_id)
    return outcome


def _needs(replies: dict[str, Stored], key: str, round_: int, item: JudgeItem) -> bool:
    """Round 1: no reply yet. Round 2: the first reply does not validate, and no second one yet."""
    if round_ == 1:
        return key not in replies
    first = replies.get(key)
    return first is not None and request_key(key, 2) not in replies and _parsed(first.text, item) is None


def _parsed(text: str, item: JudgeItem) -> Reply | None:
    try:
        return parse_reply(text, item.brands, item.answer)
    except InvalidReply:
        return None


def _send(config: VisibilityConfig, lake: LakeSettings, journal: CollectionJournal, platform: Platform, day: str,
          run_id: str, settings: CollectionSettings, log: Callable[[str], None], planned) -> CollectionTally:
    with reading(lake) as conn:
        spent = _rows(conn, SPENT_TODAY, {"date": day, "prefix": JOURNAL_PREFIX})[0][0]
    return asyncio.run(collect_partition_async(config, platform, day, run_id, journal, settings, log,
                                               given=GivenPlan(planned, float(spent))))


def _rows(conn, sql: str, params: dict) -> list[tuple]:
    return conn.execute(sql, params).fetchall()


def _rows_of(outcome: JudgeOutcome, item: JudgeItem, key: str, replies: dict[str, Stored],
             errors: dict[str, tuple[str, str | None]], platform: Platform, prompt_version: str,
             judged_at: datetime, run_id: str) -> None:
    answered = [replies[k] for k in (request_key(key, 1), request_key(key, 2)) if k in replies]
    reply, error = None, None
    for stored in answered:
        try:
            reply = parse_reply(stored.text, item.brands, item.answer)
            break
        except InvalidReply as exc:
            error = f"reply {answered.index(stored) + 1} does not validate: {exc}"
    if reply is not None:
        status, error = JUDGED, None
    elif len(answered) == 2:
        status = INVALID
    else:
        status = UNSENT
        state, last = errors.get(request_key(key, len(answered) + 1), ("pending", None))
        if state == "deferred":  # the judge has no deadline: its daily budget was spent
            last = f"deferred: judge.yaml's max_cost_per_day ({platform.max_cost_per_day:g}) is spent for the day"
        error = (error + "; " if error else "") + (last or outcome.stopped or f"request {state}")
    costs = [s.cost for s in answered if s.cost is not None and not s.reused]
    identity = {"request_key": item.request_key, "date": date.fromisoformat(item.date), "platform": item.platform}
    outcome.calls.append({
        **identity, "judge_key": key, "content_hash": item.content_hash, "brands": list(item.brands),
        "judge_platform": platform.name, "judge_model": platform.model, "prompt_version": prompt_version,
        "status": status, "error": error, "requests": len(answered),
        "cost": round(sum(costs), 8) if costs else None,
        "currency": next((s.currency for s in answered if s.currency), None),
        "claims_dropped": reply.claims_dropped if reply else None,
        "reused": bool(answered) and all(s.reused for s in answered),
        "judged_at": judged_at, "run_id": run_id})
    for verdict in reply.verdicts if reply else ():
        outcome.verdicts.append({
            **identity, "brand": verdict.brand, "sentiment": verdict.sentiment, "role": verdict.role,
            "claims": list(verdict.claims), "judge_platform": platform.name, "judge_model": platform.model,
            "prompt_version": prompt_version})
