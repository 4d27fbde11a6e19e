"""How a simulated platform behaves: its latency, limits and faults.

Every transient decision is drawn from a random generator seeded by (seed, platform, request
key, receipt number), so a run against the simulator is reproducible while retries of the
same request still see fresh outcomes. What the platform decides about the content itself
(moderation, truncation) is seeded by the request key alone: a retry sees the same outcome.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field, replace
from enum import Enum

WINDOW_RETRY_HEADERS = (None, "retry-after", "llm_provider-retry-after")
MODERATED, TRUNCATED = "moderated", "truncated"


class Fault(str, Enum):
    NONE = "none"
    SERVER_ERROR = "server_error"  # 500 / 502 / 503
    HANG = "hang"  # never answers within the client's timeout
    MALFORMED = "malformed"  # 200 with a JSON body that does not parse
    TRUNCATED = "truncated"  # 200 whose body stops before its Content-Length
    DROP = "drop"  # connection closed without a response
    THROTTLE = "throttle"  # 429 although the rate limit was respected (a "storm")


@dataclass(frozen=True)
class PlatformBehaviour:
    rate_limit_rps: float | None = None  # server-side token bucket; None = unlimited
    latency_s: tuple[float, float] = (0.05, 0.3)  # uniform range, before time_scale
    server_error_rate: float = 0.0
    hang_rate: float = 0.0
    malformed_rate: float = 0.0
    truncated_rate: float = 0.0
    drop_rate: float = 0.0
    throttle_rate: float = 0.0
    hang_s: float = 120.0
    outage_requests: int = 0  # the first N requests get 503: the platform is down, then recovers
    api_key: str | None = None  # when set, requests without this bearer key get 401
    # A careless upstream: its server errors quote the request's Authorization header back.
    echo_credentials: bool = False
    retry_after_format: str = "seconds"  # or "date" (an HTTP date in Retry-After)
    # The answer's own outcome, the same for every attempt of a request: moderated in the
    # platform's way (an error or a finish reason, see dialects/), or cut at max tokens.
    moderation_rate: float = 0.0
    truncation_rate: float = 0.0
    # The account is in arrears: every request gets the platform's billing error until a
    # top-up (POST /_admin/<platform>/topup) clears it.
    billing_error: bool = False
    # A fixed-window limiter: `window_limit` requests per calendar window of `window_s`
    # seconds (aligned to multiples of window_s since the epoch), 429 beyond that. The 429
    # carries `window_retry_header` with the seconds left in the window: None (no header at
    # all), "retry-after", or "llm_provider-retry-after" (what LiteLLM's proxy sends instead).
    window_limit: int | None = None
    window_s: float = 60.0
    window_retry_header: str | None = None
    # DeepSeek keeps a waiting non-streaming request alive with a blank line every this many
    # seconds before the JSON body (only answers whose latency is at least this long).
    keepalive_s: float = 1.0
    # A slow drip: the answer's body is written two bytes at a time, this many seconds apart
    # (every read arrives before a per-read timeout, the whole body long after it).
    drip_s: float | None = None
    # Every answer's body broken the same way (app.BROKEN_BODIES: empty_choices, null_content,
    # json_array, invalid_utf8): a fault no retry can cure.
    broken_body: str | None = None
    cache_hit_rate: float = 0.3  # share of requests that report cached prompt tokens
    # (brand, first day YYYY-MM-DD, factor): from that day on, the platform names the brand with
    # its weight multiplied by factor (a change of known size, for tests and demos).
    brand_shifts: tuple[tuple[str, str, float], ...] = ()
    # (first day YYYY-MM-DD, model): from that day on the platform answers with another model, as
    # a platform's silent upgrade does: it reports that model (and its fingerprint) and writes
    # differently (longer, in prose rather than lists).
    model_switch: tuple[str, str] | None = None
    # As a judge (judge/prompt.py): the share of brands labelled with a wrong sentiment, and the
    # share of replies that do not validate (drawn per request key: the retry may validate).
    judge_error_rate: float = 0.0
    judge_malformed_rate: float = 0.0

    def __post_init__(self) -> None:
        if self.window_retry_header not in WINDOW_RETRY_HEADERS:
            raise ValueError(f"window_retry_header must be one of {WINDOW_RETRY_HEADERS}, "
                             f"not {self.window_retry_header!r}")
        if self.window_limit is not None and (self.window_limit < 0 or self.window_s <= 0):
            raise ValueError("window_limit must be >= 0 and window_s > 0")
        if self.keepalive_s <= 0:
            raise ValueError("keepalive_s must be > 0")

    def with_transient_faults(self, rate: float, hangs: bool = True) -> PlatformBehaviour:
        """Spread a total transient-fault share over the fault kinds a real platform shows.

        Without hangs (which cost a whole client timeout each), the other kinds share the rate.
        """
        shares = {"server_error_rate": 0.4, "hang_rate": 0.2 if hangs else 0.0,
                  "malformed_rate": 0.15, "truncated_rate": 0.1, "drop_rate": 0.15}
        total = sum(shares.values())
        return replace(self, **{name: rate * share / total for name, share in shares.items()})

    def draw_fault(self, rng: random.Random) -> Fault:
        roll = rng.random()
        for fault, share in (
            (Fault.THROTTLE, self.throttle_rate),
            (Fault.SERVER_ERROR, self.server_error_rate),
            (Fault.HANG, self.hang_rate),
            (Fault.MALFORMED, self.malformed_rate),
            (Fault.TRUNCATED, self.truncated_rate),
            (Fault.DROP, self.drop_rate),
        ):
            if roll < share:
                return fault
            roll -= share
        return Fault.NONE

    def draw_outcome(self, rng: random.Random) -> str | None:
        """The answer's fate: MODERATED, TRUNCATED or None (a complete answer)."""
        roll = rng.random()
        if roll < self.moderation_rate:
            return MODERATED
        if roll < self.moderation_rate + self.truncation_rate:
            return TRUNCATED
        return None

    def factors_on(self, day: str | None) -> dict[str, float]:
        factors: dict[str, float] = {}
        for brand, first_day, factor in self.brand_shifts:
            if day is not None and day[:10] >= first_day:
                factors[brand] = factors.get(brand, 1.0) * factor
        return factors

    def model_on(self, day: str | None, asked: str) -> str | None:
        """The model that answers on `day`: the switched-to one from its first day, else None."""
        if self.model_switch is not None and day is not None and day[:10] >= self.model_switch[0]:
            return self.model_switch[1]
        return None

    def draw_latency(self, rng: random.Random, time_scale: float) -> float:
        low, high = self.latency_s
        return rng.uniform(low, high) * time_scale


@dataclass
class SimulatorSettings:
    seed: int = 0
    time_scale: float = 1.0
    default: PlatformBehaviour = field(default_factory=PlatformBehaviour)
    platforms: dict[str, PlatformBehaviour] = field(default_factory=dict)
    # Only paths for these platforms answer (404 otherwise); None accepts any name.
    known_platforms: frozenset[str] | None = None

    def behaviour(self, platform: str) -> PlatformBehaviour:
        return self.platforms.get(platform, self.default)
