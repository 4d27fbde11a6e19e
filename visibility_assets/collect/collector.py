"""Collect one (date, platform) partition: plan, resume, send within limits, checkpoint.

The journal is the checkpoint: requests whose answer is stored are skipped, so a run that
follows a crash or a failure only sends what is still missing. Workers (at most the
platform's max_concurrency) share one rate limiter and one HTTP connection pool per
platform. A circuit breaker stops a platform that keeps failing, and a deadline defers
what is left instead of dropping it.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import date as Date
from datetime import datetime, timedelta

import httpx

from visibility_assets.collect.client import (
    DEFERRED,
    FAILED,
    PENDING,
    SUCCEEDED,
    UNREACHABLE_ATTEMPTS,
    Answer,
    Attempt,
    ChatClient,
    RequestOutcome,
    RetrySettings,
)
from visibility_assets.collect.cost import searches_billed
from visibility_assets.collect.dialects import UnsupportedSetting, dialect_of
from visibility_assets.collect.errors import ErrorClass
from visibility_assets.collect.in_flight import InFlightLog
from visibility_assets.collect.journal import CollectionJournal
from visibility_assets.collect.pacing import AdaptiveRateLimiter
from visibility_assets.collect.plan import PlannedRequest, TaskRequests, plan_requests, plan_task_requests
from visibility_assets.collect.tally import CollectionFailed, CollectionTally, check_tally
from visibility_assets.collect.transport import mounts, tls_context
from visibility_assets.config import MissingApiKey, Platform, VisibilityConfig
from visibility_assets.core.answers import MODERATED, TRUNCATED
from visibility_assets.core.faults import DOWNSTREAM, RULE, SOURCE, DiskFull
from visibility_assets.core.interrupts import on_stop, signal_name
from visibility_assets.core.partitions import Partition
from visibility_assets.core.progress import say
from visibility_assets.core.secrets import SecretScrubber
from visibility_assets.warehouse.lake import LakeSettings

# Problems with how a platform is set up: no request is sent, and retrying cannot help.
SETUP_ERRORS = (MissingApiKey, UnsupportedSetting)

# A retry's wait is told to whoever follows the run at most this often (and only a long one).
WAIT_NOTICE_EVERY_S = 15.0

# httpcore's pool slows down sharply past ~100 connections; one pool per platform, capped.
MAX_CONNECTIONS_PER_PLATFORM = 100


@dataclass(frozen=True)
class CollectionSettings:
    retry: RetrySettings = RetrySettings()
    deadline: float | None = None  # epoch seconds; what is not sent by then is deferred
    # How often answers go from the local log (in_flight.py) to the journal's lake tables: a
    # checkpoint costs a lake commit (~30 ms of CPU and a file per table), the log a write; at
    # every 2 s the commits were two thirds of the collector's CPU (`bench collect`).
    checkpoint_interval_s: float = 5.0
    failure_share_limit: float = 0.1  # the partition fails above this share of failed requests
    breaker_consecutive_failures: int = 5  # requests failed after all retries, in a row
    timeout_s: float | None = None  # overrides the platform's timeout (tests, benchmarks)
    quota_window_s: float = 60.0  # the fixed quota window the pacer may learn (tests shorten it)
    long_wait_s: float = 5.0  # a retry that waits this long says so (progress.py)


def collect_partition(config: VisibilityConfig, platform: Platform, date: str, run_id: str,
                      journal: CollectionJournal, settings: CollectionSettings = CollectionSettings(),
                      log: Callable[[str], None] = lambda _: None, task: TaskRequests | None = None) -> CollectionTally:
    """Blocking entry point: runs the partition's collection on its own event loop."""
    report = asyncio.run(collect_partition_async(config, platform, date, run_id, journal, settings, log, task))
    check_tally(report, settings.failure_share_limit)
    return report


def fault_class_of(error: Exception) -> str:
    """The platform's (source), unless the config is wrong (rule) or the run was stopped (downstream)."""
    return RULE if isinstance(error, SETUP_ERRORS) else getattr(error, "fault_class", SOURCE)


@dataclass
class PartitionOutcome:
    """One partition of a collection run: its report, or why it failed or was not collected."""
    date: str
    platform: str
    report: CollectionTally | None = None
    error: Exception | None = None  # CollectionFailed, MissingApiKey, or the platform's earlier failure


def collect_partitions(config: VisibilityConfig, partitions: Sequence[Partition], run_id: str,
                       lake: LakeSettings,
                       settings: CollectionSettings = CollectionSettings(),
                       log: Callable[[str], None] = lambda _: None,
                       task: TaskRequests | None = None) -> list[PartitionOutcome]:
    """Collect several partitions in one run: platforms side by side on one event loop, each
    with its own pacing and connection pool, and each platform's days one after the other (so
    its rate limit holds). A platform that fails (breaker, missing key) is not asked for its
    later days; those stay uncollected for the next run. With a `task` (events/), the one
    partition asks that task's requests instead of the nightly plan."""
    days_by_platform: dict[str, list[str]] = {}
    for partition in sorted(partitions):
        days_by_platform.setdefault(partition.platform, []).append(partition.day)

    async def one_platform(platform: Platform, days: list[str]) -> list[PartitionOutcome]:
        outcomes: list[PartitionOutcome] = []
        for date in days:
            if outcomes and outcomes[-1].error is not None:
                outcomes.append(PartitionOutcome(date, platform.name, error=outcomes[-1].error))
                continue
            outcome = PartitionOutcome(date, platform.name)
            # Opened off the loop, as the partition's setup is: the other platforms keep sending.
            journal = await asyncio.to_thread(CollectionJournal, lake, date, platform.name)
            try:
                outcome.report = await collect_partition_async(config, platform, date, run_id, journal,
                                                               settings, log, task)
                check_tally(outcome.report, settings.failure_share_limit)
            except (CollectionFailed, *SETUP_ERRORS) as exc:
                outcome.error = exc
            finally:
                journal.close()
            outcomes.append(outcome)
        return outcomes

    async def all_platforms() -> list[list[PartitionOutcome]]:
        return await asyncio.gather(*(one_platform(config.platform(name), days)
                                      for name, days in days_by_platform.items()))

    return [outcome for outcomes in asyncio.run(all_platforms()) for outcome in outcomes]


@dataclass(frozen=True)
class GivenPlan:
    """Requests planned elsewhere (the judge's), sent as a partition's: `spent` is what counts
    already toward the platform's max_cost_per_day."""
    requests: Sequence[PlannedRequest]
    spent: float = 0.0


async def collect_partition_async(config: VisibilityConfig, platform: Platform, date: str, run_id: str,
                                  journal: CollectionJournal, settings: CollectionSettings,
                                  log: Callable[[str], None] = lambda _: None,
                                  task: TaskRequests | None = None, given: GivenPlan | None = None) -> CollectionTally:
    """Collect one partition on the running loop; several platforms can share one loop."""
    # The plan and the journal's reads take a while: off the loop, so that the platforms
    # already sending on it keep their pace (each platform's setup held up the others' probes).
    setup = await asyncio.to_thread(_prepare, config, platform, date, journal, task, given)
    report, todo = setup.report, setup.todo
    if not todo:
        return report

    api_key = platform.api_key()  # raises MissingApiKey before anything is sent
    dialect = dialect_of(platform)
    dialect.check(platform)  # raises UnsupportedSetting before anything is sent
    headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
    timeout = settings.timeout_s or platform.timeout_s
    limits = httpx.Limits(max_connections=min(platform.max_concurrency, MAX_CONNECTIONS_PER_PLATFORM),
                          max_keepalive_connections=min(platform.max_concurrency, MAX_CONNECTIONS_PER_PLATFORM))
    in_flight = setup.in_flight
    run = _Run(report, journal, settings, log, setup.attempts_before, _CostCap(setup.caps), in_flight)
    started = time.monotonic()
    async with httpx.AsyncClient(timeout=timeout, limits=limits, mounts=mounts(), verify=tls_context()) as http:
        limiter = AdaptiveRateLimiter(platform.rate_limit_rps, quota_window_s=settings.quota_window_s)
        price = config.price(platform.name, platform.model, Date.fromisoformat(date))
        client = ChatClient(http, platform, dialect, limiter, settings.retry, run_id, headers, price,
                            timeout_s=timeout, scrub=SecretScrubber.for_env(p.api_key_env for p in config.platforms),
                            on_send=in_flight.sent, on_wait=run.on_wait, on_tool_round=run.first_attempt.set)
        queue: asyncio.Queue[PlannedRequest] = asyncio.Queue()
        for request in todo:
            queue.put_nowait(request)
        checkpointer = asyncio.create_task(run.checkpoint_until_done())
        loop = asyncio.get_running_loop()
        try:
            with on_stop(lambda signum: loop.call_soon_threadsafe(run.interrupt, signum)):
                # One request alone first: an account in arrears, a bad key or a wrong model then
                # costs one refused request, not max_concurrency of them. The others start once
                # its first attempt has an answer (or, in a tool loop, its first round asked for
                # the tool), not after its retries: a transient fault of the first request would
                # hold the platform's whole rate for its backoff.
                await run.work_in_tasks(client, queue, min(platform.max_concurrency, queue.qsize() + 1),
                                        first_alone=True)
        finally:
            run.done.set()
            await checkpointer  # its last flush stores what the workers finished
            in_flight.close()
    if run.unstored:
        pass  # the next run closes the logged attempts the journal lacks
    elif run.interrupted:
        journal.close_interrupted(in_flight)  # the attempts cut off mid-flight, stored as interrupted
    else:
        in_flight.clear()  # every attempt sent is in the journal now
    report.wall_s = time.monotonic() - started
    run.stop_if_told_to_wait()
    # What a stop left in the queue was never sent: it stays pending in the journal.
    return report


@dataclass
class _Setup:
    """A partition ready to send: its tally, what is left to send, and the journal's counts."""
    report: CollectionTally
    todo: list[PlannedRequest]
    in_flight: InFlightLog | None = None
    attempts_before: dict[str, int] | None = None
    caps: list[tuple[float | None, float]] | None = None


def _prepare(config: VisibilityConfig, platform: Platform, date: str, journal: CollectionJournal,
             task: TaskRequests | None, given: GivenPlan | None = None) -> _Setup:
    """Plan the partition, register the plan and resume from the journal."""
    tls_context()  # built here, off the event loop, once per process
    if given is not None:
        planned = list(given.requests)
    elif task is not None:
        planned = plan_task_requests(config, platform, task)
    else:
        planned = plan_requests(config, platform, date)
    report = CollectionTally(platform.name, date, planned=len(planned),
                             planned_keys=[r.request_key for r in planned], permitted_rps=platform.rate_limit_rps)
    in_flight = journal.in_flight_log()
    report.answers_recovered = journal.recover_answers(in_flight)  # before the plan marks answered requests
    journal.register_plan(planned)
    report.interrupted_closed = journal.close_interrupted(in_flight)
    done = journal.succeeded_keys()
    todo = [r for r in planned if r.request_key not in done]
    report.skipped_done, report.to_send = len(planned) - len(todo), len(todo)
    if not todo:
        return _Setup(report, todo)
    caps = [(platform.max_cost_per_day, given.spent if given is not None else journal.cost_so_far())]
    if task is not None and task.extra:
        caps.append((platform.extra_cost_per_day, journal.cost_so_far(extra_only=True)))
    return _Setup(report, todo, in_flight, journal.attempts_so_far(), caps)


class _Run:
    """The mutable state of one collection run, shared by its workers."""

    def __init__(self, report: CollectionTally, journal: CollectionJournal, settings: CollectionSettings,
                 log: Callable[[str], None], attempts_before: dict[str, int], cost_cap: _CostCap,
                 in_flight: InFlightLog):
        self.report, self.journal, self.settings, self.log = report, journal, settings, log
        self.in_flight = in_flight
        self.attempts_before, self.cost_cap = attempts_before, cost_cap
        self.pending_attempts: list[Attempt] = []
        self.pending_outcomes: list[RequestOutcome] = []
        self.unstated_outcomes: list[RequestOutcome] = []  # outcomes whose request state is not stored yet
        self.consecutive_failures = 0
        self.finished = 0
        # Requests left pending because the platform asked for a wait beyond the retry cap.
        self.told_to_wait = 0
        self.longest_wait_s = 0.0
        self.done = asyncio.Event()
        self.first_attempt = asyncio.Event()  # the platform answered an attempt (or failed to), or a tool round
        self.workers: list[asyncio.Task] = []
        self.last_wait_notice = -WAIT_NOTICE_EVERY_S
        self.interrupted = False
        self.unstored = False  # a checkpoint the disk refused: the in-flight log keeps what it had

    async def on_attempt(self, attempt: Attempt) -> None:
        self.first_attempt.set()
        self.pending_attempts.append(attempt)
        self.report.attempts += 1
        if attempt.http_status == 429:
            self.report.http_429 += 1
        if attempt.error_class is None:
            self.report.latencies_ms.append(attempt.latency_ms)
            self.report.tokens += attempt.total_tokens or 0

    async def work_in_tasks(self, client: ChatClient, queue: asyncio.Queue, workers: int,
                            first_alone: bool = False) -> None:
        """`workers` taking requests side by side, as tasks that a stop signal cancels; with
        `first_alone`, the others start once the first one's first attempt is answered."""
        self.workers = [asyncio.create_task(self.work(client, queue))]
        if first_alone and workers > 1:
            answered = asyncio.create_task(self.first_attempt.wait())
            await asyncio.wait([self.workers[0], answered], return_when=asyncio.FIRST_COMPLETED)
            answered.cancel()
        self.workers += [asyncio.create_task(self.work(client, queue)) for _ in range(workers - 1)]
        for result in await asyncio.gather(*self.workers, return_exceptions=True):
            if isinstance(result, BaseException) and not isinstance(result, asyncio.CancelledError):
                raise result
        self.workers = []

    def on_wait(self, request: PlannedRequest, seconds: float, after: str) -> None:
        """Say so when a retry waits long, at most every WAIT_NOTICE_EVERY_S: a command that seems
        silent for minutes is taken for hung."""
        now = time.monotonic()
        if seconds < self.settings.long_wait_s or now - self.last_wait_notice < WAIT_NOTICE_EVERY_S:
            return
        self.last_wait_notice = now
        report, until = self.report, datetime.now().astimezone() + timedelta(seconds=seconds)
        say(self.log, f"{report.platform} {report.date}: retrying {request.question_id} round {request.round} after"
                 f" {after}: waiting {seconds:.0f} s, until {until:%H:%M:%S}; {self.finished} of {report.to_send}"
                 " requests done", logging.WARNING)

    def interrupt(self, signum: int) -> None:
        """Told to stop: no request is sent any more, and those in flight are cut off (sent
        again, under their keys, by the next run)."""
        report = self.report
        self.interrupted = True
        report.stop(f"{report.platform} {report.date}: interrupted by {signal_name(signum)}; stopped sending,"
                    f" {report.to_send - report.succeeded} requests stay pending for the next run", retryable=False,
                    fault_class=DOWNSTREAM)  # not the platform's doing: the machine's, or its operator's
        for worker in self.workers:
            worker.cancel()

    async def work(self, client: ChatClient, queue: asyncio.Queue) -> None:
        """Take requests from the queue until it is empty or the platform is stopped."""
        deadline = self.settings.deadline
        while not queue.empty() and not self.report.stopped:
            request = queue.get_nowait()
            if deadline is not None and time.time() >= deadline:
                self._finish(RequestOutcome(request, DEFERRED))
                continue
            if self.cost_cap.reached():
                self.report.deferred_by_cost += 1
                self._finish(RequestOutcome(request, DEFERRED))
                continue
            first = self.attempts_before.get(request.request_key, 0) + 1
            outcome = await client.complete(request, first, self.on_attempt, deadline)
            self._finish(outcome)

    def _finish(self, outcome: RequestOutcome) -> None:
        report = self.report
        self.pending_outcomes.append(outcome)
        self.finished += 1
        if outcome.state == FAILED and outcome.error_class == ErrorClass.BILLING.value:
            # Only a payment helps: stop the platform now; the request stays pending for after it.
            outcome.state = PENDING
            report.stop(f"{report.platform} {report.date}: the platform refused for the account's balance or quota"
                        f" ({outcome.error_message}); stopped sending, {report.to_send - report.succeeded}"
                        f" requests stay pending until the account is topped up", retryable=False)
        if outcome.state == FAILED and outcome.error_class == ErrorClass.UNREACHABLE.value:
            # Nothing listens at the address: retrying for minutes only hides that it is down.
            outcome.state = PENDING
            report.stop(f"{report.platform} {report.date}: the platform is down: {outcome.error_message}"
                        f" ({UNREACHABLE_ATTEMPTS} attempts in a row); stopped sending,"
                        f" {report.to_send - report.succeeded} requests stay pending for the next run",
                        retryable=False)
        if outcome.state == SUCCEEDED:
            self._keep(outcome)
            self._count_answer(outcome.answer)
            report.retries_histogram[len(outcome.attempts) - 1] += 1
            self.consecutive_failures = 0
        elif outcome.state == FAILED:
            report.failed += 1
            report.failed_by_class[outcome.error_class] += 1
            report.retries_histogram[max(0, len(outcome.attempts) - 1)] += 1
            self.consecutive_failures += 1
            limit = self.settings.breaker_consecutive_failures
            if self.consecutive_failures >= limit:
                report.stop(
                    f"{report.platform} {report.date}: circuit breaker open after {limit} requests in a"
                    f" row failed all retries (last: {outcome.error_class}: {outcome.error_message});"
                    f" stopped sending, unsent requests stay pending for the next run")
        elif outcome.state == DEFERRED:
            report.deferred += 1
        elif outcome.wait_asked_s is not None:  # pending until the platform's wait has passed
            self.told_to_wait += 1
            self.longest_wait_s = max(self.longest_wait_s, outcome.wait_asked_s)
        if self.finished % 50 == 0:
            say(self.log, f"{report.platform} {report.date}: {self.finished}/{report.to_send} done,"
                     f" {report.succeeded} ok, {report.failed} failed")

    def _keep(self, outcome: RequestOutcome) -> None:
        """The answer into the local log at once: a run killed before the next checkpoint keeps it."""
        try:
            self.journal.log_answer(self.in_flight, outcome)
        except DiskFull as exc:
            self._stop_for_full_disk(exc)

    def _stop_for_full_disk(self, exc: DiskFull) -> None:
        """Nothing more is sent that could not be stored; the log keeps what it had."""
        self.unstored = True
        report = self.report
        report.stop(f"{report.platform} {report.date}: {exc}; stopped sending", retryable=False,
                    fault_class=DOWNSTREAM)
        for worker in self.workers:
            if worker is not asyncio.current_task():
                worker.cancel()

    def stop_if_told_to_wait(self) -> None:
        """Fail the partition when requests were left pending for a wait beyond the retry cap:
        Dagster's RetryPolicy runs it again later and the journal resumes them."""
        if self.told_to_wait:
            report = self.report
            report.stop(f"{report.platform} {report.date}: {self.told_to_wait} requests left pending: the platform"
                        f" asked to wait {self.longest_wait_s:.0f} s (Retry-After), beyond the"
                        f" {self.settings.retry.max_wait_s:g} s it waits; a later run resumes them")

    def _count_answer(self, answer: Answer) -> None:
        report = self.report
        report.succeeded += 1
        report.moderated += answer.normalized.outcome == MODERATED
        report.truncated += answer.normalized.outcome == TRUNCATED
        report.searches += searches_billed(answer.normalized.usage, answer.normalized.search_used)
        if answer.cost is not None:
            report.cost += answer.cost
            report.currency = answer.currency
            self.cost_cap.add(answer.cost)

    async def checkpoint_until_done(self) -> None:
        """Flush buffered results every interval, off the event loop so pacing never stalls;
        the request states of the whole run go with the last flush (journal.checkpoint says why).
        A disk that refuses a checkpoint stops the platform: nothing more is sent that could not
        be stored."""
        try:
            while not self.done.is_set():
                try:
                    await asyncio.wait_for(self.done.wait(), self.settings.checkpoint_interval_s)
                except TimeoutError:
                    pass
                await self._flush(states=False)
            await self._flush(states=True)  # what finished since, and every outcome's state
        except DiskFull as exc:
            self._stop_for_full_disk(exc)

    async def _flush(self, states: bool) -> None:
        attempts, outcomes = self.pending_attempts, self.pending_outcomes
        self.pending_attempts, self.pending_outcomes = [], []
        self.unstated_outcomes += outcomes
        if states:
            outcomes, self.unstated_outcomes = self.unstated_outcomes, []
        else:
            outcomes = [o for o in outcomes if o.state == SUCCEEDED]  # their answers, stored now
        await asyncio.to_thread(self.journal.checkpoint, attempts, outcomes, states)


class _CostCap:
    """max_cost_per_day (and, for an event-driven task, extra_cost_per_day): once a spend
    reaches its limit, the rest is deferred. Each cap is (limit or None, spent so far)."""

    def __init__(self, caps: list[tuple[float | None, float]]):
        self.caps = [[limit, spent] for limit, spent in caps]

    def add(self, cost: float) -> None:
        for cap in self.caps:
            cap[1] += cost

    def reached(self) -> bool:
        return any(limit is not None and spent >= limit for limit, spent in self.caps)
