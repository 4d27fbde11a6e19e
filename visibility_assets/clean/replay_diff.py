"""What a replay found (clean/replay.py): per platform and per (platform, date), the answers
compared, how many changed and in which fields, and a few examples to read."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import date, datetime

# The fields compared: the sample's validity, then each brand's result (cleaned_samples and
# sample_brand_results columns of the same names).
SAMPLE_FIELDS = ("valid", "invalid_reason")
BRAND_FIELDS = ("mentioned", "mention_count", "first_mention_order", "list_rank", "recommended")
# Not a column: the replayed cleaner could not analyse an answer that cleaning stored (quarantined).
QUARANTINED = "quarantined"
FIELDS = SAMPLE_FIELDS + BRAND_FIELDS + (QUARANTINED,)


@dataclass(frozen=True, slots=True)
class Diff:
    field: str
    brand: str | None  # None for a field of the sample
    stored: object
    replayed: object


@dataclass
class Tally:
    """changed_by_field counts differences: one per answer for a sample field, one per answer
    and brand for a brand field; `changed` counts answers with at least one."""
    answers: int = 0
    changed: int = 0
    changed_by_field: dict[str, int] = field(default_factory=dict)

    @property
    def diff_share(self) -> float | None:
        return self.changed / self.answers if self.answers else None

    def count(self, diffs: list[Diff]) -> None:
        self.answers += 1
        self.changed += bool(diffs)
        for diff in diffs:
            self.changed_by_field[diff.field] = self.changed_by_field.get(diff.field, 0) + 1

    def add(self, other: Tally) -> None:
        self.answers += other.answers
        self.changed += other.changed
        for name, n in other.changed_by_field.items():
            self.changed_by_field[name] = self.changed_by_field.get(name, 0) + n

    def by_field(self) -> dict[str, int]:
        """changed_by_field in FIELDS order (stable output)."""
        return {name: self.changed_by_field[name] for name in FIELDS if name in self.changed_by_field}

    def as_json(self) -> dict:
        return {"answers": self.answers, "changed": self.changed, "diff_share": self.diff_share,
                "changed_by_field": self.by_field()}


@dataclass
class DayTally(Tally):
    """One (platform, date): a row of analyzer_replays."""
    stored_analyzer_versions: set[str] = field(default_factory=set)


@dataclass(frozen=True)
class Example:
    request_key: str
    date: date
    platform: str
    question_id: str
    field: str
    brand: str | None
    stored: object
    replayed: object
    excerpt: str

    def as_json(self) -> dict:
        return {"request_key": self.request_key, "date": self.date.isoformat(), "platform": self.platform,
                "question_id": self.question_id, "field": self.field, "brand": self.brand,
                "stored": self.stored, "replayed": self.replayed, "excerpt": self.excerpt}


@dataclass
class PlatformReport:
    platform: str
    tally: Tally = field(default_factory=Tally)
    skipped_other_config: int = 0
    examples: list[Example] = field(default_factory=list)

    def as_json(self) -> dict:
        return {"platform": self.platform, **self.tally.as_json(),
                "skipped_other_config": self.skipped_other_config,
                "examples": [e.as_json() for e in self.examples]}


@dataclass
class ReplayFindings:
    replay_id: str
    replayed_at: datetime
    config_version: str  # of the current catalog: the only stored version compared
    analyzer_version: str  # of the replayed cleaner
    since: date | None
    sample: int | None  # the sample size asked for; None: every stored answer
    platforms: dict[str, PlatformReport] = field(default_factory=dict)
    days: dict[tuple[str, date], DayTally] = field(default_factory=dict)
    timings: dict[str, float] = field(default_factory=dict)  # seconds: read, analyse, compare
    reviewers: object = None  # clean/replay_reviews.py's ReviewerAgreement: both analyzers against the reviewers

    def platform(self, name: str) -> PlatformReport:
        if name not in self.platforms:
            self.platforms[name] = PlatformReport(name)
        return self.platforms[name]

    def day(self, platform: str, day: date) -> DayTally:
        return self.days.setdefault((platform, day), DayTally())

    @property
    def total(self) -> Tally:
        total = Tally()
        for report in self.platforms.values():
            total.add(report.tally)
        return total

    @property
    def skipped_other_config(self) -> int:
        return sum(p.skipped_other_config for p in self.platforms.values())

    @property
    def stored_analyzer_versions(self) -> list[str]:
        return sorted({v for day in self.days.values() for v in day.stored_analyzer_versions})

    def as_json(self) -> dict:
        return {"replay_id": self.replay_id, "replayed_at": self.replayed_at.isoformat(),
                "config_version": self.config_version, "analyzer_version": self.analyzer_version,
                "stored_analyzer_versions": self.stored_analyzer_versions,
                "since": self.since.isoformat() if self.since else None, "sample": self.sample,
                "total": {**self.total.as_json(), "skipped_other_config": self.skipped_other_config},
                "platforms": [self.platforms[name].as_json() for name in sorted(self.platforms)],
                "timings_s": {name: round(s, 3) for name, s in self.timings.items()},
                "reviewers": self.reviewers.as_json() if self.reviewers is not None else None}
