"""What one partition asks: every question of the platform, every round, in priority order."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import date as Date
from typing import Protocol

from visibility_assets.collect.dialects import dialect_of
from visibility_assets.config import Platform, Question, VisibilityConfig
from visibility_assets.config.schema import AskedForm


def _digest(text: str, length: int = 32) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:length]


@dataclass(frozen=True)
class PlannedRequest:
    request_key: str  # deterministic: the same partition always asks the same keys
    date: str
    platform: str
    question_id: str
    question_text: str
    category: str
    scene: str
    round: int
    priority: int
    model: str
    prompt_hash: str
    body: dict
    task_id: str | None = None  # the event-driven task that asked it (collection_tasks); None: nightly
    variant: str | None = None  # the question's variant asked (questions.yaml); None: its own text

    @property
    def params_json(self) -> str:
        params = {k: v for k, v in self.body.items() if k not in ("model", "messages")}
        return json.dumps(params, sort_keys=True)


def request_body(platform: Platform, form: AskedForm) -> dict:
    """The platform's request in its dialect: model, the question as this form asks it, its search
    and thinking switches, and the form's user location where the platform's search takes one."""
    return dialect_of(platform).body(platform, form.text, form.location)


def plan_requests(config: VisibilityConfig, platform: Platform, date: str) -> list[PlannedRequest]:
    """The nightly plan: every question and canary prompt, rounds 1..platform.rounds."""
    questions = config.questions + tuple(c.as_question() for c in config.canaries)
    return _plan(platform, date, questions, range(1, platform.rounds + 1))


def plan_task_requests(config: VisibilityConfig, platform: Platform, task: TaskRequests) -> list[PlannedRequest]:
    """An event-driven task's requests. Extra rounds (alerts, ad-hoc) are numbered after the
    day's other rounds and keyed by the task too, so they never coincide with a nightly
    request; questions added to the config get the nightly requests the day lacked."""
    questions = config.questions_of(ids=task.question_ids)
    rounds = range(task.first_round, task.first_round + task.rounds)
    return _plan(platform, task.date.isoformat(), questions, rounds, task.task_id if task.extra else None)


class TaskRequests(Protocol):
    task_id: str
    date: Date
    question_ids: list[str]
    first_round: int
    rounds: int
    extra: bool


def _plan(platform: Platform, date: str, questions: Sequence[Question], rounds: Iterable[int],
          task_id: str | None = None) -> list[PlannedRequest]:
    planned = []
    for round_ in rounds:
        for question in questions:
            for form in question.forms():
                body = request_body(platform, form)
                prompt_hash = _digest(json.dumps(body, sort_keys=True, ensure_ascii=False))
                # A variant is in the key, so two variants asking the same text are two requests;
                # the question's own text keeps the keys it had before variants existed.
                asked = question.id if form.variant is None else f"{question.id}|variant:{form.variant}"
                identity = f"{date}|{platform.name}|{asked}|{round_}|{prompt_hash}"
                key = _digest(identity if task_id is None else f"{identity}|task:{task_id}")
                planned.append(PlannedRequest(
                    request_key=key, date=date, platform=platform.name, question_id=question.id,
                    question_text=form.text, category=question.category, scene=question.scene, round=round_,
                    priority=question.priority, model=platform.model, prompt_hash=prompt_hash, body=body,
                    task_id=task_id, variant=form.variant,
                ))
    # Highest priority first, so a collection cut short by its deadline loses the least; within
    # a priority, every question's first round before any second round.
    planned.sort(key=lambda r: (-r.priority, r.round, r.question_id, r.variant or ""))
    return planned


def requests_per_answer(platform: Platform) -> int:
    """Requests an answer takes at least: a search that is a tool loop (Kimi's $web_search) sends
    the question, then the tool's result."""
    return 2 if platform.web_search and dialect_of(platform).max_tool_rounds else 1


def content_hash(text: str) -> str:
    return _digest(text, 32)
