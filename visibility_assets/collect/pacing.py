"""Client-side pacing for one platform: a steady request rate that backs off on 429.

Requests are spaced evenly at the current rate (no bursts), so the platform's own token
bucket is never drained. On a 429 the throttled request waits its Retry-After (in
client.py) and the platform's rate drops by 30%, once per throttling episode (the 429s
that arrive within one Retry-After answer requests sent before we slowed down); the
rate then climbs back to the permitted one over `recovery_s` (additive increase,
multiplicative decrease). A long Retry-After (a quota window, not a pacing hint) pauses
every sender of the platform until it has passed.

The clock and the sleep are parameters so that tests can run the limiter in virtual time.
"""

from __future__ import annotations

import asyncio
import math
import time
from collections.abc import Awaitable, Callable

DECREASE = 0.7
LONG_PAUSE_S = 5.0


class AdaptiveRateLimiter:
    def __init__(self, rate: float, *, min_rate_share: float = 0.05, recovery_s: float = 10.0,
                 clock: Callable[[], float] = time.monotonic,
                 sleep: Callable[[float], Awaitable[None]] = asyncio.sleep):
        self.permitted = rate
        self.rate = rate
        self.min_rate = max(rate * min_rate_share, 0.05)
        self.recovery_s = recovery_s  # time to climb from min back to the permitted rate
        self._clock, self._sleep = clock, sleep
        self._next_slot = clock()
        self._last_update = self._next_slot
        self._cooldown_until = 0.0  # end of the current throttling episode
        self._paused_until = 0.0  # end of the latest long pause
        self.pauses = 0

    async def acquire(self, longest_pause_s: float = math.inf) -> bool:
        """Wait for this caller's slot; slots are 1/rate apart.

        False, at once and without a slot, when the platform ordered a pause longer than
        `longest_pause_s`: the caller leaves its request for later instead of waiting.
        """
        while True:
            pauses = self.pauses
            now = self._clock()
            if self._paused_until - now > longest_pause_s:
                return False
            self._recover(now)
            slot = max(now, self._next_slot)
            self._next_slot = slot + 1.0 / self.rate
            if slot > now:
                await self._sleep(slot - now)
            # A pause ordered while we waited voids earlier slots: queue again behind it.
            if self.pauses == pauses:
                return True

    def pause_left(self) -> float:
        """Seconds until the platform's long pause is over; 0 when there is none."""
        return max(0.0, self._paused_until - self._clock())

    def throttled(self, retry_after: float | None) -> None:
        """The platform answered 429 (Retry-After in seconds, if it said)."""
        now = self._clock()
        wait = retry_after if retry_after is not None else 1.0
        if now >= self._cooldown_until:
            self.rate = max(self.min_rate, self.rate * DECREASE)
            self._cooldown_until = now + wait
        if wait >= LONG_PAUSE_S:
            self.pauses += 1
            self._paused_until = max(self._paused_until, now + wait)
            self._next_slot = max(self._next_slot, now + wait)
        self._last_update = max(self._last_update, now)

    def _recover(self, now: float) -> None:
        """Additive increase, counted from the end of the throttling episode, not from within it."""
        since = max(self._last_update, self._cooldown_until)
        if now > since and self.rate < self.permitted:
            step = (self.permitted - self.min_rate) * (now - since) / self.recovery_s
            self.rate = min(self.permitted, self.rate + step)
        self._last_update = max(self._last_update, now)
