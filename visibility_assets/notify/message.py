"""One alert of the warehouse table `visibility_alerts`, as the text people read in a chat.

The text keeps brand names as they are (often Chinese) and uses short English labels, so the
same message reads the same in every chat service and every locale.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import math
from collections.abc import Mapping
from dataclasses import asdict, dataclass
from typing import Any

from visibility_assets.core.faults import BRAND, RULE, SOURCE

KIND_LABELS = {"mention_rate": "mention rate", "refusal_share": "refusal share", "error_share": "error share",
               "moderation_share": "moderation share"}


def alert_fault_class(kind: str) -> str:
    """As fct_visibility_alerts.sql says, for rows written before it did."""
    return BRAND if kind == "mention_rate" else RULE if kind == "model_change" else SOURCE


@dataclass(frozen=True)
class AlertMessage:
    date: dt.date
    platform: str
    kind: str  # mention_rate | refusal_share | error_share | moderation_share | model_change
    category: str | None  # null for the shares
    subject: str  # the brand, or the invalid-answer reason
    direction: str  # up | down
    rate: float
    rate_low: float | None
    rate_high: float | None
    baseline_rate: float
    baseline_low: float | None
    baseline_high: float | None
    change: float
    z: float | None
    p_value: float | None
    q_value: float | None
    answers: int
    baseline_answers: int
    baseline_days: int
    run_id: str | None
    decision: str | None  # alert | borderline (None for rows written before the column existed)
    report_url: str | None
    fault_class: str = BRAND  # whose the change is (core/faults.py): brand, source or rule

    @classmethod
    def from_row(cls, row: Mapping[str, Any], report_url: str | None) -> AlertMessage:
        """From a row of visibility_alerts (a dict of its columns); extra columns are ignored."""
        return cls(
            date=_as_date(row["date"]), platform=str(row["platform"]), kind=str(row["kind"]),
            category=row.get("category"), subject=str(row["subject"]), direction=str(row["direction"]),
            rate=float(row["rate"]), rate_low=_float(row.get("rate_low")), rate_high=_float(row.get("rate_high")),
            baseline_rate=float(row["baseline_rate"]), baseline_low=_float(row.get("baseline_low")),
            baseline_high=_float(row.get("baseline_high")), change=float(row["change"]), z=_float(row.get("z")),
            p_value=_float(row.get("p_value")), q_value=_float(row.get("q_value")),
            answers=int(row["answers"]), baseline_answers=int(row["baseline_answers"]),
            baseline_days=int(row["baseline_days"]), run_id=row.get("run_id"), decision=row.get("decision"),
            report_url=report_url, fault_class=row.get("fault_class") or alert_fault_class(str(row["kind"])))

    @property
    def message_id(self) -> str:
        return self.alert_id

    @property
    def alert_id(self) -> str:
        """What the alert is about, never how it was computed: a re-run that recomputes the same
        change (other rates, another run id) keeps the id, so it is not notified again. JSON
        encodes the parts so that no brand name containing a separator can collide."""
        key = json.dumps([self.date.isoformat(), self.platform, self.kind, self.category or "", self.subject,
                          self.direction], ensure_ascii=False)
        return hashlib.sha256(key.encode("utf-8")).hexdigest()

    @property
    def is_share(self) -> bool:
        return self.kind != "mention_rate"

    @property
    def good_news(self) -> bool:
        """A brand seen more often, or fewer refusals and errors (chat cards colour it)."""
        return (self.direction == "up") != self.is_share

    @property
    def title(self) -> str:
        label = KIND_LABELS.get(self.kind, self.kind.replace("_", " "))
        what = label if self.is_share else f"{self.subject} {label}"
        return f"{what} {self.direction} on {self.platform} ({self.date.isoformat()})"

    def facts(self) -> list[tuple[str, str]]:
        """(label, value) pairs, for the formats that set labels apart (bold, fields)."""
        facts = [("Platform", self.platform)]
        if self.category:
            facts.append(("Category", self.category))
        facts.append(("Brand" if not self.is_share else "Reason", self.subject))
        facts += [
            ("Change", f"{self.change * 100:+.1f} pp ({_percent(self.baseline_rate)} → {_percent(self.rate)})"),
            ("Today", f"{_percent(self.rate)} (95% CI {_interval(self.rate_low, self.rate_high)}, n={self.answers})"),
            (f"Baseline ({self.baseline_days} d)", f"{_percent(self.baseline_rate)} (95% CI"
             + f" {_interval(self.baseline_low, self.baseline_high)}, n={self.baseline_answers})"),
            ("Test", f"p = {_number(self.p_value)}, q = {_number(self.q_value)}"),
        ]
        if self.decision == "borderline":
            facts.append(("Decision", "borderline: more samples are being collected"))
        return facts

    def lines(self) -> list[str]:
        return plain_lines(self.facts(), self.report_url)

    def fields(self) -> dict[str, Any]:
        """The alert's columns as a flat JSON-ready object (ISO date, no NaN or infinity)."""
        fields = asdict(self)
        fields["date"] = self.date.isoformat()
        return {name: None if isinstance(value, float) and not math.isfinite(value) else value
                for name, value in fields.items()}


def plain_lines(facts: list[tuple[str, str]], report_url: str | None) -> list[str]:
    """A message as plain lines, the report link last."""
    lines = [f"{label}: {value}" for label, value in facts]
    if report_url:
        lines.append(f"Report: {report_url}")
    return lines


def _as_date(value: Any) -> dt.date:
    if isinstance(value, dt.datetime):
        return value.date()
    if isinstance(value, dt.date):
        return value
    return dt.date.fromisoformat(str(value))


def _float(value: Any) -> float | None:
    return None if value is None else float(value)


def _percent(value: float | None) -> str:
    return "n/a" if value is None or not math.isfinite(value) else f"{value * 100:.1f}%"


def _interval(low: float | None, high: float | None) -> str:
    if low is None or high is None:
        return "n/a"
    return f"{low * 100:.1f}–{high * 100:.1f}%"


def _number(value: float | None) -> str:
    return "n/a" if value is None or not math.isfinite(value) else f"{value:.2g}"
