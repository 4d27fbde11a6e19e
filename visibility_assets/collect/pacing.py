"""Client-side pacing for one platform: a steady request rate that backs off on 429.

Requests are spaced evenly at the current rate (no bursts), so a platform's own token
bucket is never drained. A 429 pauses every sender until its Retry-After has passed and
halves the rate; the rate then climbs back to the permitted one in small steps
(additive increase, multiplicative decrease), so a platform that throttles is not
retried into.
"""

from __future__ import annotations

import asyncio
import time


class AdaptiveRateLimiter:
    def __init__(self, rate: float, *, min_rate_share: float = 0.05, recovery_s: float = 10.0):
        self.permitted = rate
        self.rate = rate
        self.min_rate = max(rate * min_rate_share, 0.05)
        self.recovery_s = recovery_s  # time to climb from min back to the permitted rate
        self._next_slot = time.monotonic()
        self._last_update = self._next_slot
        self._cooldown_until = 0.0
        self.throttle_events = 0

    async def acquire(self) -> None:
        """Wait for this caller's slot; slots are 1/rate apart."""
        while True:
            epoch = self.throttle_events
            now = time.monotonic()
            self._recover(now)
            slot = max(now, self._next_slot)
            self._next_slot = slot + 1.0 / self.rate
            if slot > now:
                await asyncio.sleep(slot - now)
            # A 429 while we waited voids slots handed out before it: queue again behind the pause.
            if self.throttle_events == epoch:
                return

    def throttled(self, retry_after: float | None) -> None:
        """The platform answered 429: pause everyone, then go on at a lower rate."""
        now = time.monotonic()
        self.throttle_events += 1
        # Answers to requests sent before the pause arrive in a burst: cut the rate once per pause.
        if now >= self._cooldown_until:
            self.rate = max(self.min_rate, self.rate * 0.5)
        pause = retry_after if retry_after is not None else 1.0 / self.rate
        self._cooldown_until = max(self._cooldown_until, now + pause)
        self._next_slot = max(self._next_slot, now + pause)
        self._last_update = now

    def _recover(self, now: float) -> None:
        if self.rate < self.permitted:
            step = (self.permitted - self.min_rate) * (now - self._last_update) / self.recovery_s
            self.rate = min(self.permitted, self.rate + step)
        self._last_update = now
