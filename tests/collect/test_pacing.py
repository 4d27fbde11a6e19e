"""The pacer in virtual time: even spacing, the cut on 429, recovery, the floor, long pauses."""

from __future__ import annotations

import asyncio
import heapq
import itertools

import pytest

from visibility_assets.collect.pacing import AdaptiveRateLimiter


class FakeClock:
    """Virtual time: sleep() parks its caller until run() moves the time to its wake-up."""

    def __init__(self) -> None:
        self.now = 0.0
        self._sleepers: list[tuple[float, int, asyncio.Future]] = []
        self._order = itertools.count()  # equal wake-ups go in the order they were asked for

    def __call__(self) -> float:
        return self.now

    async def sleep(self, seconds: float) -> None:
        wake_up = asyncio.get_running_loop().create_future()
        heapq.heappush(self._sleepers, (self.now + seconds, next(self._order), wake_up))
        await wake_up

    def run(self, *coroutines) -> None:
        """Run the coroutines to their end, the time jumping from one wake-up to the next."""
        asyncio.run(self._run(coroutines))

    async def _run(self, coroutines) -> None:
        tasks = [asyncio.ensure_future(c) for c in coroutines]
        while True:
            await self._until_all_rest(tasks)
            if not self._sleepers:
                break
            when, _, wake_up = heapq.heappop(self._sleepers)
            self.now = max(self.now, when)
            wake_up.set_result(None)
        for task in tasks:
            task.result()  # a failed assertion inside a task fails the test

    async def _until_all_rest(self, tasks) -> None:
        """Let the loop run until every task has ended or sleeps on this clock."""
        while sum(not task.done() for task in tasks) > len(self._sleepers):
            await asyncio.sleep(0)


def paced(rate: float, **kwargs) -> tuple[AdaptiveRateLimiter, FakeClock]:
    clock = FakeClock()
    return AdaptiveRateLimiter(rate, clock=clock, sleep=clock.sleep, **kwargs), clock


async def sender(limiter: AdaptiveRateLimiter, clock: FakeClock, granted: list[float],
                 start: float = 0.0, requests: int = 1) -> None:
    """From time `start`, asks for `requests` slots one after the other, noting when each came."""
    await clock.sleep(start - clock.now)
    for _ in range(requests):
        await limiter.acquire()
        granted.append(clock.now)


async def throttle(limiter: AdaptiveRateLimiter, clock: FakeClock, at: float, retry_after: float) -> None:
    """A 429 with this Retry-After arrives at time `at`."""
    await clock.sleep(at - clock.now)
    limiter.throttled(retry_after)


def test_senders_asking_at_once_get_slots_one_over_rate_apart():
    """Five senders asking at the same moment are granted slots 1/rate apart: no burst."""
    limiter, clock = paced(4.0)
    granted: list[float] = []
    clock.run(*(sender(limiter, clock, granted) for _ in range(5)))
    assert granted == pytest.approx([0.0, 0.25, 0.5, 0.75, 1.0])


def test_idle_time_saves_up_only_the_last_half_second_of_slots():
    """After an idle spell only the slots of the last CATCH_UP_S are taken at once (rate x 0.5:
    two at 4 rps), then slots are 1/rate apart again."""
    limiter, clock = paced(4.0)
    granted: list[float] = []
    clock.run(sender(limiter, clock, granted), sender(limiter, clock, granted, start=10.0, requests=5))
    assert granted == pytest.approx([0.0, 10.0, 10.0, 10.0, 10.25, 10.5])


def test_no_slot_is_saved_up_while_the_platform_throttles():
    limiter, clock = paced(4.0)
    granted: list[float] = []
    limiter.throttled(3.0)  # a throttling episode of 3 s: the rate drops by 30%, and nothing is caught up
    clock.run(sender(limiter, clock, granted, start=2.0, requests=3))
    assert granted == pytest.approx([2.0, 2.0 + 1 / 2.8, 2.0 + 2 / 2.8])


def test_429s_within_one_retry_after_cut_the_rate_once():
    """Several 429s within one Retry-After are one throttling episode: the rate drops by 30% once."""
    limiter, clock = paced(10.0)
    for clock.now in (0.0, 0.3, 0.9):
        limiter.throttled(1.0)
    assert limiter.rate == pytest.approx(7.0)


def test_a_429_after_the_retry_after_has_passed_cuts_the_rate_again():
    """A 429 once the episode's Retry-After has passed starts a new episode: another 30% off."""
    limiter, clock = paced(10.0)
    for clock.now in (0.0, 1.0):
        limiter.throttled(1.0)
    assert limiter.rate == pytest.approx(4.9)


def test_the_rate_never_drops_below_min_rate():
    """However many episodes, the rate stops at min_rate (5% of the permitted rate)."""
    limiter, clock = paced(10.0)
    for clock.now in range(30):
        limiter.throttled(1.0)
    assert limiter.rate == limiter.min_rate == pytest.approx(0.5)


def test_the_rate_climbs_back_to_the_permitted_rate_over_recovery_s():
    """From min_rate the rate climbs linearly to the permitted rate in recovery_s, counted from the last
    slot asked for within the episode (here at 29.5 s)."""
    limiter, clock = paced(10.0, recovery_s=10.0)
    for clock.now in range(30):  # the last episode runs from 29 s to 30 s
        limiter.throttled(1.0)
    rates: list[float] = []

    async def rates_at(times: list[float]) -> None:
        for at in times:
            await clock.sleep(at - clock.now)
            await limiter.acquire()
            rates.append(limiter.rate)

    clock.run(rates_at([29.5, 35.0, 40.0, 45.0]))
    assert rates == pytest.approx([0.5, 0.5 + 9.5 * 5.5 / 10, 10.0, 10.0])


def test_a_long_retry_after_pauses_every_waiting_sender_until_it_has_passed():
    """A Retry-After of 5 s or more holds back every sender, also those granted a slot before it came."""
    limiter, clock = paced(1.0)
    granted: list[float] = []
    clock.run(*(sender(limiter, clock, granted) for _ in range(3)),  # slots at 0, 1 and 2 s
              throttle(limiter, clock, at=0.5, retry_after=10.0),
              sender(limiter, clock, granted, start=3.0))  # arrives during the pause
    spacing = 1 / 0.7  # the rate was cut by 30%
    assert granted == pytest.approx([0.0, 10.5, 10.5 + spacing, 10.5 + 2 * spacing])


def test_a_short_retry_after_does_not_pause_the_other_senders():
    """A Retry-After under 5 s only lowers the rate: slots already granted keep their time."""
    limiter, clock = paced(1.0)
    granted: list[float] = []
    clock.run(*(sender(limiter, clock, granted) for _ in range(3)),
              throttle(limiter, clock, at=0.5, retry_after=1.0),
              sender(limiter, clock, granted, start=3.0))
    assert granted == pytest.approx([0.0, 1.0, 2.0, 3.0])


@pytest.mark.parametrize(("retry_after", "granted", "answered_at"), [
    (3600.0, [True, False, False], [0.0, 1.0, 2.0]),  # refused when each asks, not an hour later
    (10.0, [True, True, True], [0.0, 10.5, 10.5 + 1 / 0.7]),  # a pause within the limit is waited out
])
def test_a_sender_is_refused_at_once_a_pause_longer_than_it_will_wait(retry_after, granted, answered_at):
    """acquire(longest_pause_s) returns False without waiting when the platform's pause is longer."""
    limiter, clock = paced(1.0)
    results: list[bool] = []
    times: list[float] = []

    async def ask(start: float) -> None:
        await clock.sleep(start - clock.now)
        results.append(await limiter.acquire(longest_pause_s=30.0))
        times.append(clock.now)

    clock.run(ask(0.0), ask(0.0), throttle(limiter, clock, at=0.5, retry_after=retry_after), ask(2.0))
    assert results == granted
    assert times == pytest.approx(answered_at)
    assert limiter.pause_left() == pytest.approx(max(0.0, 0.5 + retry_after - clock.now))



MINUTE_START = 60 * 16_666_667  # a wall-clock time at which a calendar minute begins


def window_paced(second_of_minute: float) -> tuple[AdaptiveRateLimiter, FakeClock]:
    """5 rps, with a wall clock that starts at that second of a minute and moves with the fake one."""
    clock = FakeClock()
    limiter = AdaptiveRateLimiter(5.0, clock=clock, sleep=clock.sleep,
                                  wall=lambda: MINUTE_START + second_of_minute + clock.now)
    return limiter, clock


def test_a_gateways_one_minute_hint_pauses_every_sender_until_the_minute_turns():
    """LiteLLM's llm_provider-retry-after: 60, given at second 26 of a minute, means 34 s, not 60."""
    limiter, clock = window_paced(20.0)
    clock.run(sender(limiter, clock, [], requests=31))  # 6 s at 5 rps
    limiter.throttled(60.0)
    assert 33.5 <= limiter.pause_left() <= 34.5


def test_hintless_refusals_make_a_window_only_after_several_in_one_minute():
    """A platform that only caps concurrency answers 429 without a hint now and then: no minute pause."""
    limiter, clock = window_paced(0.0)
    clock.run(sender(limiter, clock, [], requests=5))
    limiter.throttled(None)
    assert limiter.pause_left() == 0.0 and not limiter.window.known
    limiter.throttled(None)
    limiter.throttled(None)
    assert limiter.window.known and limiter.pause_left() > 50


def test_a_learned_window_sends_at_most_what_one_window_accepted():
    limiter, clock = window_paced(0.0)
    clock.run(sender(limiter, clock, [], requests=31))  # 30 accepted, the 31st refused
    limiter.throttled(60.0)
    assert limiter.window.budget == 30
    granted: list[float] = []
    clock.run(sender(limiter, clock, granted, requests=31))
    assert 60.0 <= granted[0] <= 61.0  # the refused one goes when the minute turns
    assert granted[29] < 120.0 <= granted[30]  # the next minute's 31st waits for the one after
