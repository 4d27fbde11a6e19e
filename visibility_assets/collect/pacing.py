"""Client-side pacing for one platform: a steady request rate that backs off on 429.

Requests are spaced evenly at the current rate (no bursts), so the platform's own token
bucket is never drained. On a 429 the throttled request waits its Retry-After (in
client.py) and the platform's rate drops by 30%, once per throttling episode (the 429s
that arrive within one Retry-After answer requests sent before we slowed down); the
rate then climbs back to the permitted one over `recovery_s` (additive increase,
multiplicative decrease). A long Retry-After (a quota window, not a pacing hint) pauses
every sender of the platform until it has passed.
"""

from __future__ import annotations

import asyncio
import time

DECREASE = 0.7
LONG_PAUSE_S = 5.0


class AdaptiveRateLimiter:
    def __init__(self, rate: float, *, min_rate_share: float = 0.05, recovery_s: float = 10.0):
        self.permitted = rate
        self.rate = rate
        self.min_rate = max(rate * min_rate_share, 0.05)
        self.recovery_s = recovery_s  # time to climb from min back to the permitted rate
        self._next_slot = time.monotonic()
        self._last_update = self._next_slot
        self._cooldown_until = 0.0
        self.pauses = 0

    async def acquire(self) -> None:
        """Wait for this caller's slot; slots are 1/rate apart."""
        while True:
            pauses = self.pauses
            now = time.monotonic()
            self._recover(now)
            slot = max(now, self._next_slot)
            self._next_slot = slot + 1.0 / self.rate
            if slot > now:
                await asyncio.sleep(slot - now)
            # A pause ordered while we waited voids earlier slots: queue again behind it.
            if self.pauses == pauses:
                return

    def throttled(self, retry_after: float | None) -> None:
        """The platform answered 429 (Retry-After in seconds, if it said)."""
        now = time.monotonic()
        wait = retry_after if retry_after is not None else 1.0
        if now >= self._cooldown_until:
            self.rate = max(self.min_rate, self.rate * DECREASE)
            self._cooldown_until = now + wait
        if wait >= LONG_PAUSE_S:
            self.pauses += 1
            self._next_slot = max(self._next_slot, now + wait)
        self._last_update = max(self._last_update, now)

    def _recover(self, now: float) -> None:
        if now < self._cooldown_until:
            self._last_update = now
            return
        if self.rate < self.permitted:
            step = (self.permitted - self.min_rate) * (now - self._last_update) / self.recovery_s
            self.rate = min(self.permitted, self.rate + step)
        self._last_update = now
