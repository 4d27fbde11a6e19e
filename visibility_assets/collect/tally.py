"""What one partition's collection did, and when it fails the partition."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

from visibility_assets.core.faults import SOURCE


@dataclass
class CollectionTally:
    platform: str
    date: str
    planned: int = 0
    planned_keys: list[str] = field(default_factory=list)  # every one must be stored, or be why not
    skipped_done: int = 0
    interrupted_closed: int = 0  # attempts a crashed run sent and never journaled, closed on resume
    answers_recovered: int = 0  # answers a crashed run received and logged, stored on resume (not asked again)
    to_send: int = 0
    succeeded: int = 0  # answered, truncated or moderated: stored either way
    moderated: int = 0
    truncated: int = 0
    failed: int = 0
    deferred: int = 0
    deferred_by_cost: int = 0
    failed_by_class: Counter = field(default_factory=Counter)
    attempts: int = 0
    http_429: int = 0
    retries_histogram: Counter = field(default_factory=Counter)  # retries per request -> count
    latencies_ms: list[float] = field(default_factory=list)
    tokens: int = 0
    searches: int = 0
    cost: float = 0.0
    currency: str | None = None
    wall_s: float = 0.0
    permitted_rps: float = 0.0
    stopped: str | None = None  # why the platform was stopped (breaker, billing), if it was
    stop_is_retryable: bool = True  # a billing stop needs a person, not another try
    stop_fault_class: str = SOURCE  # whose the stop is (core/faults.py): the platform's, unless interrupted

    @property
    def achieved_rps(self) -> float:
        """HTTP attempts per second: how hard the platform was driven against its limit."""
        return self.attempts / self.wall_s if self.wall_s else 0.0

    @property
    def failure_share(self) -> float:
        return self.failed / self.to_send if self.to_send else 0.0

    def latency_percentile(self, q: float) -> float | None:
        if not self.latencies_ms:
            return None
        ordered = sorted(self.latencies_ms)
        return ordered[min(len(ordered) - 1, int(q * len(ordered)))]

    def stop(self, reason: str, retryable: bool = True, fault_class: str = SOURCE) -> None:
        """Stop sending: the first reason stands."""
        if not self.stopped:
            self.stopped, self.stop_is_retryable, self.stop_fault_class = reason, retryable, fault_class


class CollectionFailed(Exception):
    def __init__(self, message: str, report: CollectionTally, retryable: bool = True, fault_class: str = SOURCE):
        super().__init__(message)
        self.report, self.retryable, self.fault_class = report, retryable, fault_class


def check_tally(report: CollectionTally, failure_share_limit: float) -> None:
    """Raise CollectionFailed when the platform was stopped or too large a share failed.
    Moderated and truncated answers are outcomes, stored, not failures."""
    if report.stopped:
        raise CollectionFailed(report.stopped, report, report.stop_is_retryable, report.stop_fault_class)
    if report.failure_share > failure_share_limit:
        raise CollectionFailed(
            f"{report.platform} {report.date}: {report.failed} of {report.to_send} requests failed"
            f" ({report.failure_share:.0%} > limit {failure_share_limit:.0%});"
            f" by class: {dict(report.failed_by_class)}", report)
