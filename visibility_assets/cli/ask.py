"""`visibility ask`: ad-hoc questions collected now into a day's partition, as an event-driven
task with request keys of its own (they never coincide with the nightly requests).

The run waits for the platform's run slot (no other run of that platform starting or started
in the Dagster instance), then runs the nightly job for the partition in this process; it
carries the partition's tags, so while it runs the run queue starts no other run of the platform.
"""

from __future__ import annotations

import sys
import time
import uuid
from datetime import UTC, datetime, timedelta
from typing import TextIO

from visibility_assets.cli.arguments import UserError, collectable, config_of, iso_date, positive_int
from visibility_assets.config import VisibilityConfig
from visibility_assets.core import interrupts
from visibility_assets.core.days import yesterday
from visibility_assets.core.faults import DOWNSTREAM, FAULT_CLASS_TAG
from visibility_assets.core.jobs import PLATFORM_TAGS, TASK_TAG
from visibility_assets.core.progress import printing_progress

ASKED_BY = "visibility ask"
SLOT_POLL_S = 2.0
SLOT_WAIT_S = 1800.0  # how long ask waits for the platform's other run before it gives up


def add_parser(commands) -> None:
    ask = commands.add_parser("ask", help="collect ad-hoc questions now into a day's partition")
    ask.add_argument("--platform", required=True, help="the platform to ask")
    which = ask.add_mutually_exclusive_group()
    which.add_argument("--question", help="question ids, comma-separated (default: every question)")
    which.add_argument("--category", help="every question of this category")
    ask.add_argument("--rounds", type=positive_int, default=1, help="rounds of each question (default 1)")
    ask.add_argument("--date", type=iso_date, help="the partition's day (default: yesterday, Asia/Shanghai)")
    ask.add_argument("--wait", type=positive_int, default=int(SLOT_WAIT_S), metavar="SECONDS",
                     help=f"how long to wait for the platform's run in progress (default {SLOT_WAIT_S:.0f})")
    ask.set_defaults(handler=run)


def run(args) -> int:
    config = config_of(args)
    day = args.date or yesterday()
    collectable(day, day, "--date")
    ids = [q.strip() for q in (args.question or "").split(",") if q.strip()]
    return run_ask(config, args.platform, day, ids, args.category, args.rounds, wait_s=args.wait)


def run_ask(config: VisibilityConfig, platform: str, day, question_ids: list[str], category: str | None,
            rounds: int, out: TextIO | None = None, wait_s: float = SLOT_WAIT_S) -> int:
    out = out or sys.stdout  # the stream of the call (a test's, a redirected one), not of the import
    from visibility_assets.cli.plan import expected_cost_line
    from visibility_assets.events.detect import BadRequest, adhoc_event
    from visibility_assets.events.model import FAILED
    from visibility_assets.events.service import move_task, over_budget_message, record_events
    from visibility_assets.operate.instance import get_instance
    from visibility_assets.warehouse.lake import lake_settings
    from visibility_assets.warehouse.resource import WarehouseResource

    now = datetime.now(UTC)
    try:
        event = adhoc_event(config, platform, day, question_ids, category, rounds, ASKED_BY, now,
                            ident=uuid.uuid4().hex)
    except BadRequest as exc:
        raise UserError(str(exc)) from None
    warehouse = WarehouseResource.from_settings(lake_settings())
    instance = get_instance()
    requeue_dead_runs(instance, warehouse, config, platform, out)
    task = resumable_task(warehouse, event)
    if task is not None:
        print(f"task {task.task_id}: resumed ({task.history[-1]['note']}); what its runs stored is not asked again",
              file=out, flush=True)
    else:
        plan = record_events(warehouse, config, [event], now)
        if not plan.new_tasks:
            raise UserError(over_budget_message(config, platform))
        task = plan.new_tasks[0]
    print(f"task {task.task_id}: {len(task.question_ids)} question(s) x {task.rounds} round(s) on {platform}"
          f" for {day}, rounds {task.first_round}..{task.first_round + task.rounds - 1}", file=out, flush=True)
    print(expected_cost_line(config, platform, task.planned_requests, day), file=out, flush=True)
    try:
        wait_for_platform_slot(instance, warehouse, config, platform, out, wait_s)
    except UserError:
        move_task(warehouse, task.task_id, FAILED, "visibility ask: gave up waiting for the platform's other run")
        raise
    return run_task(config, task, instance, warehouse, out)


def run_task(config: VisibilityConfig, task, instance, warehouse, out: TextIO) -> int:
    """The task's run, in this process; a stop signal ends it with what it stored kept and the
    task back in the queue (a later `visibility ask` with the same arguments resumes it)."""
    from visibility_assets.definitions import build_definitions
    from visibility_assets.events.model import FAILED, REQUESTED
    from visibility_assets.events.service import move_task
    from visibility_assets.operate.failed_runs import report_failed_runs
    from visibility_assets.operate.instance.command_runs import end_as_failed
    from visibility_assets.partition_run import QUIET_RUN, materialize_partition
    from visibility_assets.runs import run_in_foreground

    run_id = str(uuid.uuid4())
    move_task(warehouse, task.task_id, REQUESTED, "visibility ask: running now", run_id)
    run_config = {**QUIET_RUN, "ops": {"raw_ai_responses": {"config": {"task_id": task.task_id}}}}
    defs = build_definitions(config)
    try:
        with printing_progress(out):
            result = run_in_foreground(lambda: materialize_partition(
                defs, task.date.isoformat(), task.platform, instance, run_config, {TASK_TAG: task.task_id}, run_id))
    except interrupts.Interrupted as stopped:  # the run did not end in time: ended here
        run = instance.get_run_by_id(run_id)
        if run is not None:  # None: stopped before its run was even created
            end_as_failed(instance, run, str(stopped))
            instance.add_run_tags(run_id, {FAULT_CLASS_TAG: DOWNSTREAM})  # the machine's doing, not the platform's
        return interrupted(config, warehouse, task.task_id, run_id, stopped.signum, out)
    signum = interrupts.received()
    if signum is not None:
        return interrupted(config, warehouse, task.task_id, run_id, signum, out)
    raw = result.metadata.get("raw_ai_responses", {})
    if not result.success:
        move_task(warehouse, task.task_id, FAILED, f"visibility ask: run {result.run_id} failed", result.run_id)
        report_failed_runs(instance, [result.run_id], config)
        print(f"FAILED (run {result.run_id}, {result.fault_class} fault): {result.error}", file=out)
        return 1
    print(f"ok (run {result.run_id}): {raw.get('succeeded', 0)} answered, {raw.get('failed', 0)} failed,"
          f" {raw.get('deferred', 0)} deferred; the partition now holds {raw.get('answers_stored', 0)} answers",
          file=out)
    return 0


def interrupted(config: VisibilityConfig, warehouse, task_id: str, run_id: str, signum: int, out: TextIO) -> int:
    from visibility_assets.events.model import PLANNED

    what = f"run {run_id} interrupted by {interrupts.signal_name(signum)}"
    task = requeue(warehouse, config, task_id, what)
    where = "back in the queue: the same `visibility ask` resumes it" if task.state == PLANNED else "failed"
    print(f"{what}; what it stored is kept; task {task_id} {where} (attempt {task.retries}"
          f" of {config.events.priority.max_attempts})", file=out, flush=True)
    return interrupts.exit_code(signum)


def requeue(warehouse, config: VisibilityConfig, task_id: str, what: str):
    """The task's run failed or died: back to the queue with the attempt counted (tasks.py)."""
    from visibility_assets.events import store
    from visibility_assets.events.model import OPEN_STATES
    from visibility_assets.events.tasks import count_failed_run

    def work(conn):
        task = store.task(conn, task_id)
        if task is not None and task.state in OPEN_STATES:
            count_failed_run(task, config.events.priority.max_attempts, what, datetime.now(UTC))
            store.save_tasks(conn, [task])
        return task

    return warehouse.write(work)[0]


def requeue_dead_runs(instance, warehouse, config: VisibilityConfig, platform: str, out: TextIO) -> None:
    """Runs of the platform whose command died (SIGKILL, a closed terminal) are marked failed,
    and their tasks go back to the queue."""
    from visibility_assets.operate.instance.command_runs import reap_dead_runs

    for key in PLATFORM_TAGS:
        for run in reap_dead_runs(instance, {key: platform}):
            print(f"run {run.run_id} of {platform}: the process that ran it is gone; marked failed", file=out,
                  flush=True)
            if run.tags.get(TASK_TAG):
                requeue(warehouse, config, run.tags[TASK_TAG], f"run {run.run_id} died with its process")


def resumable_task(warehouse, event):
    """An open task of the same `visibility ask` (platform, day, questions and rounds) whose run
    is not in progress: interrupted or killed, it is resumed rather than asked anew."""
    from visibility_assets.events.model import PLANNED
    from visibility_assets.events.service import open_tasks

    for task in open_tasks(warehouse):
        if (task.kind, task.platform, task.date, list(task.question_ids), task.rounds) == (
                "adhoc", event.platform, event.date, list(event.question_ids), event.rounds) \
                and task.reason.startswith(ASKED_BY) and task.state == PLANNED:
            return task
    return None


def wait_for_platform_slot(instance, warehouse, config: VisibilityConfig, platform: str, out: TextIO,
                           wait_s: float) -> None:
    """Wait while another run of the platform is in progress (the per-platform run limit),
    saying which and since when, finding runs whose process died, and giving up after wait_s."""
    from dagster import RunsFilter

    from visibility_assets.operate.instance.command_runs import IN_PROGRESS

    give_up_at = time.monotonic() + wait_s
    announced: str | None = None
    while True:
        requeue_dead_runs(instance, warehouse, config, platform, out)
        busy = [record for key in PLATFORM_TAGS
                for record in instance.get_run_records(RunsFilter(statuses=IN_PROGRESS, tags={key: platform}),
                                                       limit=1)]
        if not busy:
            return
        run, since = busy[0].dagster_run, busy[0].create_timestamp.astimezone().strftime("%Y-%m-%d %H:%M:%S %Z")
        if time.monotonic() > give_up_at:
            raise UserError(f"run {run.run_id} of {platform} (since {since}) is still in progress after"
                            f" {wait_s:.0f} s; one run per platform: wait for it, or end it in the Dagster UI,"
                            " then ask again")
        if announced != run.run_id:
            until = datetime.now().astimezone() + timedelta(seconds=give_up_at - time.monotonic())
            print(f"waiting for run {run.run_id} of {platform} (in progress since {since}) to end (one run per"
                  f" platform); giving up at {until:%H:%M:%S}", file=out, flush=True)
            announced = run.run_id
        time.sleep(SLOT_POLL_S)
