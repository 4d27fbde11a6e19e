"""events.yaml (optional): how events become extra collection, and where alerts are sent.

Two sections, both optional: `events:` (how events become tasks: merging, extra rounds,
priorities) and `notifications:` (the webhooks alerts go to). Every number has a range.
"""

from __future__ import annotations

import os
from typing import Annotated, Literal

from pydantic import Field, field_validator, model_validator

from visibility_assets.config.entry import Count, Number, _Entry
from visibility_assets.config.urls import EndpointUrl

# What can make the pipeline collect more: an uncertain change in visibility_alerts, a person
# asking (visibility ask, the launchpad), questions added to questions.yaml, a new analyzer
# version, and a collection-quality figure that degraded.
EVENT_KINDS = ("alert", "adhoc", "new_questions", "analyzer_version", "quality")
EventKind = Literal["alert", "adhoc", "new_questions", "analyzer_version", "quality"]


DEFAULT_BASE_PRIORITY = {"adhoc": 80, "alert": 50, "new_questions": 40, "quality": 20, "analyzer_version": 0}


class PriorityWeights(_Entry):
    """effective = base[kind] + urgency + sla - min(retry_penalty * retries, retry_penalty_cap)."""

    # A kind left out keeps its default.
    base: dict[EventKind, Annotated[Count, Field(ge=0, le=1000)]] = Field(default_factory=lambda: dict(DEFAULT_BASE_PRIORITY))
    urgency_per_point: Number = Field(default=1.0, ge=0, le=100)  # per percentage point of change
    urgency_cap: Count = Field(default=40, ge=0, le=1000)
    sla_hours: Number = Field(default=6.0, gt=0, le=24 * 7)  # a task should run within this of its event
    sla_max: Count = Field(default=30, ge=0, le=1000)  # reached at the deadline, and kept after it
    retry_penalty: Count = Field(default=10, ge=0, le=1000)
    retry_penalty_cap: Count = Field(default=30, ge=0, le=1000)
    max_attempts: Count = Field(default=3, ge=1, le=20)  # then the task fails and frees the queue

    @field_validator("base")
    @classmethod
    def _default_bases(cls, base: dict[str, int]) -> dict[str, int]:
        return {**DEFAULT_BASE_PRIORITY, **base}


class EventSettings(_Entry):
    merge_window_minutes: Number = Field(default=60.0, ge=0, le=24 * 60)
    alert_extra_rounds: Count = Field(default=3, ge=1, le=50)  # rounds of the category's questions per alert task
    # Events concern the newest collected day and this many before it; older days (a re-analysis
    # of history) get no extra samples.
    max_event_age_days: Count = Field(default=1, ge=0, le=90)
    priority: PriorityWeights = Field(default_factory=PriorityWeights)


WEBHOOK_FORMATS = ("feishu", "lark", "dingtalk", "wecom", "slack", "json")
FaultClass = Literal["brand", "source", "rule", "downstream"]  # core/faults.py


class Webhook(_Entry):
    """One receiver. Its URL carries the service's token, so the file names the environment
    variable that holds it; a signing secret (Feishu/Lark, DingTalk) likewise."""

    name: str = Field(min_length=1, pattern=r"^[A-Za-z0-9_.-]+$")
    format: Literal["feishu", "lark", "dingtalk", "wecom", "slack", "json"]
    url_env: str = Field(min_length=1, pattern=r"^[A-Za-z_][A-Za-z0-9_]*$")
    secret_env: str | None = Field(default=None, pattern=r"^[A-Za-z_][A-Za-z0-9_]*$")
    max_attempts: Count = Field(default=4, ge=1, le=20)
    timeout_s: Number = Field(default=10.0, gt=0, le=300)
    # What it receives, by class (core/faults.py): brand alerts; source, rule or downstream faults.
    classes: tuple[FaultClass, ...] = Field(default=("brand", "source", "rule", "downstream"), min_length=1)

    def url(self) -> str | None:
        return os.environ.get(self.url_env, "").strip() or None

    def secret(self) -> str | None:
        return (os.environ.get(self.secret_env, "").strip() or None) if self.secret_env else None


class DigestEmail(_Entry):
    """Where the digest is mailed: an SMTP server, its login (the password from the environment),
    the sender and the readers. `security`: starttls (port 587), ssl (465) or none (a relay on
    the local network)."""

    smtp_host: str = Field(min_length=1)
    smtp_port: Count = Field(default=587, ge=1, le=65535)
    security: Literal["starttls", "ssl", "none"] = "starttls"
    username: str | None = None
    password_env: str | None = Field(default=None, pattern=r"^[A-Za-z_][A-Za-z0-9_]*$")
    sender: str = Field(min_length=3, pattern=r"^[^@\s]+@[^@\s]+$")
    to: tuple[Annotated[str, Field(pattern=r"^[^@\s]+@[^@\s]+$")], ...] = Field(min_length=1)
    timeout_s: Number = Field(default=30.0, gt=0, le=300)

    def password(self) -> str | None:
        return (os.environ.get(self.password_env, "").strip() or None) if self.password_env else None


class Digests(_Entry):
    """Where `visibility digest` and its schedules send the digest of the own brands: webhooks of
    `notifications.webhooks` by name, and e-mail. The weekly one goes out on Mondays at 09:00
    Asia/Shanghai; `daily: true` adds one every morning at 09:00."""

    webhooks: tuple[str, ...] = ()
    email: DigestEmail | None = None
    daily: bool = False


class Notifications(_Entry):
    report_url: EndpointUrl | None = None  # where readers open the report
    workspace_url: EndpointUrl | None = None  # where readers open the workspace (digest links); else $VISIBILITY_SERVE_URL
    max_alert_age_days: Count = Field(default=2, ge=0, le=90)  # a re-analysis of old days notifies nobody
    # A `visibility replay` that reads more than this share of a platform's answers otherwise is a rule fault.
    replay_diff_limit: Number = Field(default=0.10, ge=0, le=1)
    webhooks: tuple[Webhook, ...] = ()
    digests: Digests = Field(default_factory=Digests)

    @model_validator(mode="after")
    def _digest_webhooks_exist(self) -> Notifications:
        names = [w.name for w in self.webhooks]
        unknown = [name for name in self.digests.webhooks if name not in names]
        if unknown:
            raise ValueError(f"digests.webhooks: no webhook named {unknown[0]!r} in notifications.webhooks"
                             f" (named: {', '.join(names) or 'none'})")
        return self


class EventsFile(_Entry):
    events: EventSettings = Field(default_factory=EventSettings)
    notifications: Notifications = Field(default_factory=Notifications)
