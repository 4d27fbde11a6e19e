"""Events and tasks as dataclasses, and their states (their tables: warehouse/tables.py)."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from datetime import date, datetime

# A task's life; each change is an entry of its history.
PLANNED, REQUESTED, DONE, FAILED = "planned", "requested", "done", "failed"
OPEN_STATES = (PLANNED, REQUESTED)
# What became of an event.
NEW_TASK, MERGED, NOTIFIED, OVER_BUDGET, RECORDED = "new_task", "merged", "notified", "over_budget", "recorded"
# Kinds whose tasks ask beyond the nightly plan, under request keys of their own (and count
# against the platform's daily budget); a new_questions task asks nightly requests.
EXTRA_KINDS = ("alert", "adhoc", "quality")

def stable_id(*parts: object) -> str:
    return hashlib.sha256("|".join("" if p is None else str(p) for p in parts).encode()).hexdigest()[:16]


@dataclass
class Event:
    event_id: str
    kind: str
    date: date
    platform: str | None
    category: str | None
    subject: str | None
    reason: str
    created_at: datetime
    change: float | None = None
    p_value: float | None = None
    q_value: float | None = None
    interval_width: float | None = None
    outcome: str = RECORDED
    task_id: str | None = None
    # Not stored: what a task made of this event asks.
    question_ids: tuple[str, ...] = ()
    rounds: int | None = None
    collects: bool = True  # False: recorded only (a clear alert, an analyzer version)

    def row(self) -> tuple:
        return (self.event_id, self.kind, self.date, self.platform, self.category, self.subject, self.reason,
                self.change, self.p_value, self.q_value, self.interval_width, self.outcome, self.task_id,
                self.created_at)


@dataclass
class Task:
    task_id: str
    kind: str
    date: date
    platform: str
    category: str | None
    question_ids: list[str]
    first_round: int
    rounds: int
    event_ids: list[str]
    reason: str
    base_priority: int
    urgency: int
    sla_deadline: datetime
    created_at: datetime
    retries: int = 0
    effective_priority: int = 0
    state: str = PLANNED
    history: list[dict] = field(default_factory=list)
    updated_at: datetime | None = None
    run_id: str | None = None

    @property
    def planned_requests(self) -> int:
        return len(self.question_ids) * self.rounds

    @property
    def extra(self) -> bool:
        """Asks beyond the nightly plan (its own request keys, the daily budget)."""
        return self.kind in EXTRA_KINDS

    def move(self, state: str, at: datetime, note: str | None = None) -> None:
        self.state, self.updated_at = state, at
        self.history.append({"state": state, "changed_at": at, "note": note})

    def row(self) -> tuple:
        return (self.task_id, self.kind, self.date, self.platform, self.category, list(self.question_ids),
                self.first_round, self.rounds, self.planned_requests, list(self.event_ids), self.reason,
                self.base_priority, self.urgency, self.sla_deadline, self.retries, self.effective_priority,
                self.state, list(self.history), self.created_at, self.updated_at or self.created_at, self.run_id)

    @classmethod
    def from_row(cls, row: dict) -> Task:
        fields = {k: v for k, v in row.items() if k != "planned_requests"}
        fields["question_ids"] = list(fields["question_ids"])
        fields["event_ids"] = list(fields["event_ids"])
        fields["history"] = list(fields["history"])
        return cls(**fields)
