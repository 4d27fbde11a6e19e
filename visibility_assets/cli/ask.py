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
from datetime import UTC, datetime
from typing import TextIO

from visibility_assets.cli.arguments import UserError, config_of, iso_date, positive_int
from visibility_assets.config import VisibilityConfig
from visibility_assets.core.days import yesterday

IN_PROGRESS = ("STARTING", "STARTED", "CANCELING")
SLOT_POLL_S = 2.0


def add_parser(commands) -> None:
    ask = commands.add_parser("ask", help="collect ad-hoc questions now into a day's partition")
    ask.add_argument("--platform", required=True, help="the platform to ask")
    which = ask.add_mutually_exclusive_group()
    which.add_argument("--question", help="question ids, comma-separated (default: every question)")
    which.add_argument("--category", help="every question of this category")
    ask.add_argument("--rounds", type=positive_int, default=1, help="rounds of each question (default 1)")
    ask.add_argument("--date", type=iso_date, help="the partition's day (default: yesterday, Asia/Shanghai)")
    ask.set_defaults(handler=run)


def run(args) -> int:
    config = config_of(args)
    day = args.date or yesterday()
    if day > yesterday():
        raise UserError(f"--date {day}: partitions end at yesterday ({yesterday()}, Asia/Shanghai)")
    ids = [q.strip() for q in (args.question or "").split(",") if q.strip()]
    return run_ask(config, args.platform, day, ids, args.category, args.rounds)


def run_ask(config: VisibilityConfig, platform: str, day, question_ids: list[str], category: str | None,
            rounds: int, out: TextIO | None = None) -> int:
    out = out or sys.stdout  # the stream of the call (a test's, a redirected one), not of the import
    from visibility_assets.definitions import build_definitions
    from visibility_assets.events.detect import BadRequest, adhoc_event
    from visibility_assets.events.model import FAILED, REQUESTED
    from visibility_assets.events.service import move_task, over_budget_message, record_events
    from visibility_assets.events.tasks import TASK_TAG
    from visibility_assets.operate.instance import get_instance
    from visibility_assets.runs import QUIET_RUN, materialize_partition
    from visibility_assets.warehouse.lake import lake_settings
    from visibility_assets.warehouse.resource import WarehouseResource

    now = datetime.now(UTC)
    try:
        event = adhoc_event(config, platform, day, question_ids, category, rounds, "visibility ask", now,
                            ident=uuid.uuid4().hex)
    except BadRequest as exc:
        raise UserError(str(exc)) from None
    warehouse = WarehouseResource.from_settings(lake_settings())
    plan = record_events(warehouse, config, [event], now)
    if not plan.new_tasks:
        raise UserError(over_budget_message(config, platform))
    task = plan.new_tasks[0]
    print(f"task {task.task_id}: {len(task.question_ids)} question(s) x {task.rounds} round(s) on {platform}"
          f" for {day}, rounds {task.first_round}..{task.first_round + task.rounds - 1}", file=out, flush=True)
    instance = get_instance()
    wait_for_platform_slot(instance, platform, out)
    move_task(warehouse, task.task_id, REQUESTED, "visibility ask: running now")
    run_config = {**QUIET_RUN, "ops": {"raw_ai_responses": {"config": {"task_id": task.task_id}}}}
    result = materialize_partition(build_definitions(config), day.isoformat(), platform, instance, run_config,
                                   extra_tags={TASK_TAG: task.task_id})
    raw = result.metadata.get("raw_ai_responses", {})
    if not result.success:
        move_task(warehouse, task.task_id, FAILED, f"visibility ask: run {result.run_id} failed", result.run_id)
        print(f"FAILED (run {result.run_id}): {result.error}", file=out)
        return 1
    print(f"ok (run {result.run_id}): {raw.get('succeeded', 0)} answered, {raw.get('failed', 0)} failed,"
          f" {raw.get('deferred', 0)} deferred; the partition now holds {raw.get('answers_stored', 0)} answers",
          file=out)
    return 0


def wait_for_platform_slot(instance, platform: str, out) -> None:
    """Wait while another run of the platform is starting or started: the per-platform run limit."""
    from dagster import DagsterRunStatus, RunsFilter

    statuses = [DagsterRunStatus[name] for name in IN_PROGRESS]
    announced = False
    while True:
        busy = [run for key in ("dagster/partition/platform", "visibility/platform")
                for run in instance.get_runs(RunsFilter(statuses=statuses, tags={key: platform}), limit=1)]
        if not busy:
            return
        if not announced:
            print(f"waiting for run {busy[0].run_id} of {platform} to end (one run per platform)", file=out, flush=True)
            announced = True
        time.sleep(SLOT_POLL_S)
