"""Client-side pacing for one platform: a steady request rate that backs off on 429.

Requests are spaced evenly at the current rate, so the platform's own token bucket is never
drained; a slot nobody was ready to take is kept for CATCH_UP_S (a sender busy with a slow
answer or a backoff would otherwise lose the platform's rate for good: 6% of it at 10% faults),
a catch-up of rate x CATCH_UP_S requests, half of the one-second burst token buckets allow. On a 429 the throttled request waits its Retry-After (in
client.py) and the platform's rate drops by 30%, once per throttling episode (the 429s
that arrive within one Retry-After answer requests sent before we slowed down); the
rate then climbs back to the permitted one over `recovery_s` (additive increase,
multiplicative decrease). A long Retry-After (a quota window, not a pacing hint) pauses
every sender of the platform until it has passed.

Many quotas are fixed windows: N requests per calendar minute, enforced by the platform or
by a gateway in front of it (LiteLLM's proxy answers `llm_provider-retry-after: 60`, or
nothing). QuotaWindow learns such a window from its 429s: senders wait for the window to
turn instead of burning their retries, and later windows send at most what one accepted.

The clock and the sleep are parameters so that tests can run the limiter in virtual time.
"""

from __future__ import annotations

import asyncio
import math
import time
from collections.abc import Awaitable, Callable

DECREASE = 0.7
LONG_PAUSE_S = 5.0
CATCH_UP_S = 0.5
MINUTE = 60.0
TURN_MARGIN_S = 0.25  # start a little after the window turns: the clocks of two machines differ


class QuotaWindow:
    """A fixed quota window guessed from 429s: `length`-second windows of the wall clock.

    A 429 whose hint is the window's length (LiteLLM's `llm_provider-retry-after: 60`) makes
    the guess at once; 429s without any hint make it only after EVIDENCE_REFUSALS of them in
    one window despite the slower rate, so that a platform that merely limits concurrency is
    not paced by the minute. A refusal right after the window turned undoes the guess: that
    limiter is not aligned to the clock.
    """

    EVIDENCE_REFUSALS = 3

    def __init__(self, length: float = MINUTE, wall: Callable[[], float] = time.time):
        self.length, self._wall = length, wall
        self.known = False
        self.budget: int | None = None  # requests one window accepted
        self._index: int | None = None
        self._sent = self._refused = 0
        self._turned_at: float | None = None

    def refused(self, retry_after: float | None) -> float | None:
        """A 429: the seconds until the window turns, or None when this is not a window's refusal."""
        if retry_after is not None and abs(retry_after - self.length) > 1.0:
            return None  # a pacing hint, or a wait the platform computed itself: trust it
        now = self._wall()
        self._roll(now)
        self._refused += 1
        if self.known and self._turned_at is not None and now - self._turned_at < 1.0 and self._sent <= 1:
            self.known, self.budget = False, None  # refused right after the turn: not a clock window
            return None
        if not self.known and self._refused < (1 if retry_after is not None else self.EVIDENCE_REFUSALS):
            return None
        self.known = True
        self.budget = max(1, self._sent - self._refused)
        return self._until_turn(now)

    def admit(self) -> float:
        """Seconds to wait before one more request may go (0: send it now; it is counted)."""
        now = self._wall()
        self._roll(now)
        if self.known and self.budget is not None and self._sent >= self.budget:
            return self._until_turn(now)
        self._sent += 1
        return 0.0

    def _roll(self, now: float) -> None:
        index = int(now // self.length)
        if index != self._index:
            self._turned_at = now if self._index is not None else None
            self._index, self._sent, self._refused = index, 0, 0

    def _until_turn(self, now: float) -> float:
        return (int(now // self.length) + 1) * self.length - now + TURN_MARGIN_S


class AdaptiveRateLimiter:
    def __init__(self, rate: float, *, min_rate_share: float = 0.05, recovery_s: float = 10.0,
                 clock: Callable[[], float] = time.monotonic,
                 sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
                 wall: Callable[[], float] = time.time, quota_window_s: float = MINUTE):
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
        self.window = QuotaWindow(quota_window_s, wall)

    async def acquire(self, longest_pause_s: float = math.inf, within_s: float = math.inf) -> bool:
        """Wait for this caller's slot; slots are 1/rate apart.

        False, at once and without a slot, when the platform ordered a pause longer than
        `longest_pause_s`, or when the slot would come later than `within_s` from now (the
        run's deadline): the caller leaves its request for later instead of waiting.
        """
        while True:
            pauses = self.pauses
            now = self._clock()
            if self._paused_until - now > longest_pause_s:
                return False
            self._recover(now)
            # Slots of the last CATCH_UP_S nobody took are taken now; none while throttled.
            slot = max(self._next_slot, now - (0.0 if now < self._cooldown_until else CATCH_UP_S))
            if slot - now > within_s:
                return False
            within_s -= slot - now
            self._next_slot = slot + 1.0 / self.rate
            if slot > now:
                await self._sleep(slot - now)
            # A pause ordered while we waited voids earlier slots: queue again behind it.
            if self.pauses != pauses:
                continue
            hold = self.window.admit()
            if hold == 0:
                return True
            self._pause(self._clock(), hold)  # this window's quota is spent: wait for the turn

    def wait_left(self) -> float:
        """Seconds until a new caller's slot: the long pause, or the queue of slots before it."""
        return max(0.0, self._paused_until - self._clock(), self._next_slot - self._clock())

    def pause_left(self) -> float:
        """Seconds until the platform's long pause is over; 0 when there is none."""
        return max(0.0, self._paused_until - self._clock())

    def throttled(self, retry_after: float | None) -> None:
        """The platform answered 429 (Retry-After in seconds, if it said)."""
        now = self._clock()
        turn = self.window.refused(retry_after)
        wait = turn if turn is not None else (retry_after if retry_after is not None else 1.0)
        if now >= self._cooldown_until:
            self.rate = max(self.min_rate, self.rate * DECREASE)
            self._cooldown_until = now + wait
        if wait >= LONG_PAUSE_S or turn is not None:
            self._pause(now, wait)
        self._last_update = max(self._last_update, now)

    def exhausted(self, reset_s: float) -> None:
        """The platform said no request is left until its limit resets (X-RateLimit-Remaining: 0)."""
        if reset_s > 0:
            self._pause(self._clock(), reset_s)

    def _pause(self, now: float, wait: float) -> None:
        """Every sender waits `wait` seconds; slots granted before are void."""
        self.pauses += 1
        self._paused_until = max(self._paused_until, now + wait)
        self._next_slot = max(self._next_slot, now + wait)

    def _recover(self, now: float) -> None:
        """Additive increase, counted from the last slot asked for within the throttling episode:
        under a storm of 429s that our rate did not cause, a recovery counted only from each
        episode's end left the platform 23% slower (`bench collect --storm 0.3`)."""
        if now < self._cooldown_until:
            self._last_update = now
            return
        if self.rate < self.permitted:
            step = (self.permitted - self.min_rate) * (now - self._last_update) / self.recovery_s
            self.rate = min(self.permitted, self.rate + step)
        self._last_update = now
