"""How a simulated platform behaves: its latency, limits and faults.

Every decision is drawn from a random generator seeded by (seed, platform, request key,
receipt number), so a run against the simulator is reproducible while retries of the same
request still see fresh outcomes.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field, replace
from enum import Enum


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
    retry_after_format: str = "seconds"  # or "date" (an HTTP date in Retry-After)

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
