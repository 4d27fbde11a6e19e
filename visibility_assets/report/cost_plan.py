"""What a night will cost, before it runs: per platform, the answers and requests the nightly plan
sends (questions x forms x rounds, and the second request of a search tool loop), the tokens and
searches expected per answer (the means of the last HISTORY_DAYS days of stored answers where
there are some, else an estimate from the questions' length that says it is one), priced by
prices.yaml as of the night and at the nightly schedule's hour; beside it the ceiling of extra
sampling, the judge's calls, and whether each max_cost_per_day holds. `visibility plan`, the
admin page and `visibility ask` read it."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import date, datetime, time, timedelta
from zoneinfo import ZoneInfo

import duckdb

from visibility_assets.collect.cost import request_cost
from visibility_assets.collect.plan import plan_requests, requests_per_answer
from visibility_assets.config import Platform, VisibilityConfig
from visibility_assets.core.answers import Usage
from visibility_assets.core.days import TIMEZONE
from visibility_assets.judge.calibration import REPLY_TOKENS_FIXED, REPLY_TOKENS_PER_BRAND, estimated_tokens
from visibility_assets.judge.plan import journal_platform, judge_platform
from visibility_assets.warehouse.db import has_tables

HISTORY_DAYS = 14
NIGHTLY_AT = time(2, 0)  # the nightly schedule's hour (operate/automation.py), where a price window may apply
# Without history: an answer to a recommendation question runs to about 900 tokens, the chat
# template wraps a question in a dozen, a web search adds its results to the prompt (about 700),
# and is billed once; a judge's prompt holds the answer and the question.
ASSUMED_ANSWER_TOKENS = 900
TEMPLATE_TOKENS = 12
SEARCH_RESULT_TOKENS = 700
JUDGE_INSTRUCTION_TOKENS = 350
ASSUMED_BRANDS_PER_ANSWER = 3

HISTORY = """
SELECT platform, count(*) AS answers, count(DISTINCT date) AS nights,
       avg(prompt_tokens) AS prompt_tokens, avg(completion_tokens) AS completion_tokens,
       avg(coalesce(cached_tokens, 0)) AS cached_tokens,
       avg(coalesce(search_count, CASE WHEN search_used THEN 1 ELSE 0 END)) AS searches
FROM journal_answers
WHERE date BETWEEN $first AND $last AND list_contains($platforms, platform)
  AND prompt_tokens IS NOT NULL AND completion_tokens IS NOT NULL
GROUP BY platform
"""


@dataclass(frozen=True)
class PerAnswer:
    """The usage expected of one answer (one judge call for the judge)."""
    prompt_tokens: float
    completion_tokens: float
    cached_tokens: float
    searches: float
    basis: str  # "history": the means of stored answers; "estimate": from the questions' length
    answers_seen: int = 0  # the stored answers the means are taken over
    per_night: float | None = None  # stored answers per night over the window (the judge's calls)


@dataclass(frozen=True)
class PlannedCost:
    name: str  # the platform, or "judge (PLATFORM)"
    model: str
    answers: float  # per night
    requests: float  # per night, with a tool loop's second request
    usage: PerAnswer
    cost_per_answer: float | None
    currency: str | None
    cap: float | None  # max_cost_per_day
    extra_requests_max: int = 0
    extra_cost_max: float | None = None

    @property
    def cost_per_night(self) -> float | None:
        return None if self.cost_per_answer is None else round(self.cost_per_answer * self.answers, 6)

    @property
    def cap_holds(self) -> bool | None:
        cost = self.cost_per_night
        return None if self.cap is None or cost is None else cost <= self.cap

    def as_json(self, days: int) -> dict:
        cost = self.cost_per_night
        return {"platform": self.name, "model": self.model, "answers_per_night": round(self.answers, 1),
                "requests_per_night": round(self.requests, 1),
                "prompt_tokens_per_night": round(self.usage.prompt_tokens * self.answers),
                "completion_tokens_per_night": round(self.usage.completion_tokens * self.answers),
                "searches_per_night": round(self.usage.searches * self.answers, 1),
                "cost_per_night": cost, "cost_per_days": None if cost is None else round(cost * days, 4),
                "currency": self.currency, "cost_basis": self.usage.basis, "history_answers": self.usage.answers_seen,
                "max_cost_per_day": self.cap, "cap_holds": self.cap_holds,
                "extra_requests_max": self.extra_requests_max, "extra_cost_max": self.extra_cost_max}


@dataclass(frozen=True)
class CostPlan:
    day: date
    days: int
    collection: tuple[PlannedCost, ...]
    judge: PlannedCost | None

    @property
    def rows(self) -> tuple[PlannedCost, ...]:
        return self.collection + ((self.judge,) if self.judge else ())

    def total_per_night(self) -> float | None:
        """The night's cost in the price table's currency; None when a cost is unknown or currencies differ."""
        costs = [row.cost_per_night for row in self.rows]
        if any(c is None for c in costs) or len({row.currency for row in self.rows}) > 1:
            return None
        return round(sum(costs), 6)

    def as_json(self) -> dict:
        total = self.total_per_night()
        currencies = sorted({row.currency for row in self.rows if row.currency})
        return {"date": self.day.isoformat(), "days": self.days,
                "platforms": [row.as_json(self.days) for row in self.collection],
                "judge": self.judge.as_json(self.days) if self.judge else None,
                "total_per_night": total, "total_per_days": None if total is None else round(total * self.days, 4),
                "currency": currencies[0] if len(currencies) == 1 else None,
                "history_days": HISTORY_DAYS}


def read_history(conn: duckdb.DuckDBPyConnection, config: VisibilityConfig, day: date) -> dict[str, PerAnswer]:
    """The means per answer of the stored answers of the HISTORY_DAYS days before `day`, per
    journal platform (a judge's calls are journaled as judge:PLATFORM)."""
    if not has_tables(conn, "journal_answers"):
        return {}
    names = [p.name for p in config.platforms] + [journal_platform(p.name) for p in config.platforms]
    rows = conn.execute(HISTORY, {"first": day - timedelta(days=HISTORY_DAYS), "last": day - timedelta(days=1),
                                  "platforms": names}).fetchall()
    return {name: PerAnswer(prompt, completion, cached, searches, "history", answers, answers / nights)
            for name, answers, nights, prompt, completion, cached, searches in rows}


def plan_costs(config: VisibilityConfig, history: Mapping[str, PerAnswer], day: date, days: int) -> CostPlan:
    at = datetime.combine(day, NIGHTLY_AT, ZoneInfo(TIMEZONE))
    collection = tuple(_collection(config, platform, history.get(platform.name), day, at)
                       for platform in config.platforms)
    judge = _judge(config, collection, history, day, at) if config.judge else None
    return CostPlan(day, days, collection, judge)


def _collection(config: VisibilityConfig, platform: Platform, seen: PerAnswer | None, day: date,
                at: datetime) -> PlannedCost:
    planned = plan_requests(config, platform, day.isoformat())
    usage = seen or _estimate([r.question_text for r in planned], platform.web_search)
    price = config.price(platform.name, platform.model, day)
    per_answer = _priced(price, usage, at)
    extra_cost = None if per_answer is None else per_answer * platform.extra_requests_per_day
    if extra_cost is not None and platform.extra_cost_per_day is not None:
        extra_cost = min(extra_cost, platform.extra_cost_per_day)
    return PlannedCost(platform.name, platform.model, len(planned), len(planned) * requests_per_answer(platform),
                       usage, per_answer, price.currency if price else None, platform.max_cost_per_day,
                       platform.extra_requests_per_day, None if extra_cost is None else round(extra_cost, 6))


def _judge(config: VisibilityConfig, collection: Sequence[PlannedCost], history: Mapping[str, PerAnswer],
           day: date, at: datetime) -> PlannedCost:
    """The judge's calls: one per answer naming a brand, over every platform's answers; from its
    journal where it has judged before, else every answer of the night (a ceiling) at its share."""
    judge, judged_on = config.judge, judge_platform(config)
    seen = [history[journal_platform(row.name)] for row in collection if journal_platform(row.name) in history]
    if seen:
        calls, answers = sum(s.per_night for s in seen), sum(s.answers_seen for s in seen)

        def mean(field: str) -> float:  # over every judged answer, whichever platform answered it
            return sum(getattr(s, field) * s.answers_seen for s in seen) / answers

        usage = PerAnswer(mean("prompt_tokens"), mean("completion_tokens"), mean("cached_tokens"), 0.0, "history",
                          answers, calls)
    else:
        calls = sum(row.answers for row in collection) * judge.share
        answer = max((row.usage.completion_tokens for row in collection), default=ASSUMED_ANSWER_TOKENS)
        usage = PerAnswer(JUDGE_INSTRUCTION_TOKENS + answer + TEMPLATE_TOKENS,
                          REPLY_TOKENS_FIXED + REPLY_TOKENS_PER_BRAND * ASSUMED_BRANDS_PER_ANSWER, 0.0, 0.0, "estimate")
    price = config.price(judged_on.name, judged_on.model, day)
    return PlannedCost(f"judge ({judged_on.name})", judged_on.model, calls, calls, usage, _priced(price, usage, at),
                       price.currency if price else None, judge.max_cost_per_day)


def _estimate(questions: Sequence[str], web_search: bool) -> PerAnswer:
    prompt = sum(estimated_tokens(q) for q in questions) / max(len(questions), 1) + TEMPLATE_TOKENS
    if web_search:
        prompt += SEARCH_RESULT_TOKENS
    return PerAnswer(prompt, ASSUMED_ANSWER_TOKENS, 0.0, 1.0 if web_search else 0.0, "estimate")


def _priced(price, usage: PerAnswer, at: datetime) -> float | None:
    """One answer's expected cost at the night's price (None: prices.yaml has none for the model)."""
    expected = Usage(prompt_tokens=usage.prompt_tokens, completion_tokens=usage.completion_tokens,
                     cached_tokens=usage.cached_tokens, search_count=usage.searches)
    return request_cost(price, expected, usage.searches > 0, at)
