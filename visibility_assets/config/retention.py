"""retention.yaml (optional): how long the raw evidence is kept, per table, applied by the
weekly maintenance (warehouse/maintenance.py). What the metrics are built from stays: the
cleaned samples, their brand results and every model keep their rows.

Days of the partition (the day the answers were collected for), counted back from today; 0
keeps the rows for ever. The journal's rows go with the warehouse rows they are published to, so
that a re-run never publishes, nor asks again behind the metrics' back, what retention removed.
"""

from __future__ import annotations

from pydantic import Field

from visibility_assets.config.entry import Count, _Entry


class RetentionSettings(_Entry):
    # raw_ai_responses and the journal's answers: the verbatim answers, payloads and reasoning.
    raw_answers_days: Count = Field(default=400, ge=0, le=36500)
    # http_attempts and the journal's attempts: each HTTP attempt, its status and error.
    http_attempts_days: Count = Field(default=180, ge=0, le=36500)
    # The journal's requests and collection_requests: each request's state.
    journals_days: Count = Field(default=400, ge=0, le=36500)
    # The judge's replies and requests in its journal (judge:<platform>); judge_calls and the verdicts stay.
    judge_replies_days: Count = Field(default=180, ge=0, le=36500)
    # The lake's snapshots: how far back `visibility sql --as-of` reaches, and a deleted row with it.
    snapshots_days: Count = Field(default=7, ge=0, le=3650)


class RetentionFile(_Entry):
    retention: RetentionSettings = Field(default_factory=RetentionSettings)
