"""Event-driven collection, fast: the priority formula, events merged into tasks within a window
and a daily budget, request keys of their own, the sensor on a real warehouse, dispatch and
retries, and events.yaml. The end to end run on the simulator is test_extra_sampling.py."""

from dataclasses import replace
from datetime import UTC, date, datetime, timedelta

import pytest
import yaml
from dagster import DagsterInstance, DagsterRunStatus, build_sensor_context

from visibility_assets.collect.plan import plan_requests, plan_task_requests
from visibility_assets.config import ConfigError, load_config
from visibility_assets.config.events import EventSettings, Notifications, PriorityWeights
from visibility_assets.definitions import build_resources
from visibility_assets.events.defs import collection_task_sensor
from visibility_assets.events.model import (
    DONE,
    FAILED,
    MERGED,
    NEW_TASK,
    NOTIFIED,
    OVER_BUDGET,
    PLANNED,
    RECORDED,
    REQUESTED,
    Event,
    Task,
    stable_id,
)
from visibility_assets.events.planner import plan_tasks
from visibility_assets.events.priority import effective_priority, sla_deadline, urgency
from visibility_assets.events.tasks import LAUNCH_GRACE, PRIORITY_TAG, TASK_TAG, dispatch
from visibility_assets.warehouse.db import ensure_table, insert_batch
from visibility_assets.warehouse.tables import JOURNAL_REQUESTS

from tests.conftest import write_config
from tests.pipeline import read_warehouse, write_warehouse

DAY = date(2026, 11, 30)
NOW = datetime(2026, 12, 1, 2, 0, tzinfo=UTC)
PLATFORM = "qwen"  # write_config: 12 questions (q001-q009 cloud, q010-q012 phone), 2 nightly rounds
CLOUD, PHONE = [f"q{i:03}" for i in range(1, 10)], ["q010", "q011", "q012"]


def _config_dir(tmp_path, events: dict | None = None, **platform):
    directory = write_config(tmp_path / "c", 9, **platform)
    if events is not None:
        (directory / "events.yaml").write_text(yaml.safe_dump({"events": events}), encoding="utf-8")
    return directory


def _config(tmp_path, events: dict | None = None, **platform):
    return load_config(_config_dir(tmp_path, events, **platform))


def _event(subject: str, category: str | None = "cloud", kind: str = "alert", change: float | None = 0.08,
           **fields) -> Event:
    return Event(event_id=stable_id(kind, subject, category), kind=kind, date=DAY, platform=PLATFORM,
                 category=category, subject=subject, reason=f"{subject} changed", created_at=NOW, change=change,
                 **fields)


def _plan(config, events, tasks=(), journal=None, now=NOW):
    return plan_tasks(config, list(events), list(tasks), journal or {}, now)


# --- the priority formula ----------------------------------------------------------------

WEIGHTS = PriorityWeights()  # alert base 50, 1 per point up to 40, sla 30 over 6 h, 10 per retry up to 30


def _task(change: float | None = 0.12, retries: int = 0) -> Task:
    return Task(task_id="t", kind="alert", date=DAY, platform=PLATFORM, category="cloud", question_ids=CLOUD,
                first_round=3, rounds=1, event_ids=["e"], reason="r", base_priority=WEIGHTS.base["alert"],
                urgency=urgency(change, WEIGHTS), sla_deadline=sla_deadline(NOW, WEIGHTS), created_at=NOW,
                retries=retries)


def test_urgency_is_the_size_of_the_change_in_points_up_to_its_cap():
    assert [urgency(c, WEIGHTS) for c in (None, 0.12, -0.12, 0.9)] == [0, 12, 12, WEIGHTS.urgency_cap]
    assert effective_priority(_task(0.9), NOW, WEIGHTS) == 50 + 40


@pytest.mark.parametrize("hours, sla", [(-1, 0), (0, 0), (3, 15), (6, 30), (48, 30)])
def test_the_sla_term_grows_to_its_maximum_at_the_deadline_and_stays_there(hours, sla):
    assert effective_priority(_task(), NOW + timedelta(hours=hours), WEIGHTS) == 50 + 12 + sla


@pytest.mark.parametrize("retries, penalty", [(0, 0), (1, 10), (3, 30), (50, 30)])
def test_the_retry_penalty_is_capped(retries, penalty):
    """A task that keeps failing sinks below fresh work of its kind, never below base + urgency + sla - cap."""
    late = NOW + timedelta(hours=7)
    assert effective_priority(_task(retries=retries), late, WEIGHTS) == 50 + 12 + 30 - penalty


# --- the planner ---------------------------------------------------------------------------

@pytest.mark.parametrize("later, merged", [(timedelta(minutes=59), True), (timedelta(minutes=61), False)])
def test_alerts_of_one_platform_day_and_category_merge_within_the_window(tmp_path, later, merged):
    config = _config(tmp_path, {"merge_window_minutes": 60})
    first, second = _event("阿里云"), _event("腾讯云", change=-0.2)
    [task] = _plan(config, [first]).new_tasks
    plan = _plan(config, [second], [task], now=NOW + later)
    if merged:
        assert (plan.new_tasks, plan.changed_tasks) == ([], [task])
        assert task.event_ids == [first.event_id, second.event_id] and task.urgency == 20  # the larger change
        assert (second.outcome, second.task_id) == (MERGED, task.task_id)
    else:
        assert len(plan.new_tasks) == 1 and plan.new_tasks[0] is not task and second.outcome == NEW_TASK


def test_alerts_of_one_tick_merge_but_other_categories_and_adhoc_requests_do_not(tmp_path):
    config = _config(tmp_path)
    events = [_event("阿里云"), _event("腾讯云"), _event("小米", "phone")]
    plan = _plan(config, events)
    assert [(t.category, t.question_ids, len(t.event_ids)) for t in plan.new_tasks] == [
        ("cloud", CLOUD, 2), ("phone", PHONE, 1)]
    assert [e.outcome for e in events] == [NEW_TASK, MERGED, NEW_TASK]
    asks = [_event(who, kind="adhoc", question_ids=("q001",), rounds=1) for who in ("ann", "bob")]
    assert [t.event_ids for t in _plan(config, asks).new_tasks] == [[a.event_id] for a in asks]


@pytest.mark.parametrize("journal_round, first_round", [(None, 3), (1, 3), (4, 5)])
def test_extra_rounds_are_numbered_after_every_round_the_day_has(tmp_path, journal_round, first_round):
    """After the platform's nightly rounds, the journal's highest round and earlier tasks' rounds."""
    config = _config(tmp_path, {"alert_extra_rounds": 3})
    journal = {(DAY, PLATFORM): journal_round} if journal_round else {}
    phone, cloud = _plan(config, [_event("小米", "phone"), _event("阿里云")], journal=journal).new_tasks
    assert (phone.first_round, phone.rounds) == (first_round, 3)
    assert cloud.first_round == first_round + 3


def test_the_daily_budget_cuts_rounds_and_an_event_without_room_gets_no_task(tmp_path):
    """Questions added to questions.yaml get the day's nightly rounds, outside the budget."""
    config = _config(tmp_path, {"alert_extra_rounds": 6}, extra_requests_per_day=40)
    added = _event("q011,q012", "phone", kind="new_questions", change=None, question_ids=("q011", "q012"))
    nightly, cloud = _plan(config, [added, _event("阿里云")]).new_tasks
    assert (nightly.first_round, nightly.rounds, nightly.extra) == (1, 2, False)
    assert (cloud.first_round, cloud.rounds, cloud.planned_requests) == (3, 4, 36)  # 6 x 9 wanted, 4 x 9 fit
    later = NOW + timedelta(hours=2)  # outside the merge window
    late_cloud, phone = _event("腾讯云"), _event("小米", "phone")
    plan = _plan(config, [late_cloud, phone], [nightly, cloud], now=later)
    assert (late_cloud.outcome, late_cloud.task_id) == (OVER_BUDGET, None)
    assert [(t.category, t.first_round, t.rounds, t.planned_requests) for t in plan.new_tasks] == [
        ("phone", 7, 1, 3)]


def test_extra_rounds_have_request_keys_of_their_own_and_added_questions_the_nightly_ones(tmp_path):
    config = _config(tmp_path)
    platform = config.platform(PLATFORM)
    added = _event("q010", "phone", kind="new_questions", change=None, question_ids=("q010",))
    extra, nightly_task = _plan(config, [_event("阿里云"), added]).new_tasks
    nightly = {r.question_id + str(r.round): r.request_key for r in plan_requests(config, platform, DAY.isoformat())}

    def keys(task):
        return [r.request_key for r in plan_task_requests(config, platform, task)]

    assert len(keys(extra)) == extra.planned_requests == 27 and keys(extra) == keys(extra)
    assert not set(keys(extra)) & set(nightly.values())
    assert not set(keys(replace(extra, first_round=1))) & set(nightly.values())  # even for a nightly round
    assert {r.task_id for r in plan_task_requests(config, platform, extra)} == {extra.task_id}
    assert sorted(keys(nightly_task)) == sorted([nightly["q0101"], nightly["q0102"]])


def test_questions_added_in_two_edits_are_all_asked(tmp_path):
    config = _config(tmp_path)
    first = _event("q010", "phone", kind="new_questions", change=None, question_ids=("q010",))
    second = _event("q010,q011", "phone", kind="new_questions", change=None, question_ids=("q010", "q011"))
    tasks = _plan(config, [first]).new_tasks
    plan = _plan(config, [second], tasks, now=NOW + timedelta(minutes=5))
    asked = {q for t in [*tasks, *plan.new_tasks] for q in t.question_ids}
    assert asked == {"q010", "q011"}


# --- the sensor on a real warehouse ---------------------------------------------------------

ALERT_COLUMNS = ("date DATE, platform VARCHAR, kind VARCHAR, category VARCHAR, subject VARCHAR, direction VARCHAR,"
                 " rate DOUBLE, rate_low DOUBLE, rate_high DOUBLE, baseline_rate DOUBLE, baseline_low DOUBLE,"
                 " baseline_high DOUBLE, change DOUBLE, z DOUBLE, p_value DOUBLE, q_value DOUBLE,"
                 " tests_that_day BIGINT, decision VARCHAR, answers BIGINT, baseline_answers BIGINT,"
                 " baseline_days BIGINT, stored_at TIMESTAMPTZ, run_id VARCHAR")


def _alert_row(subject, decision, category="cloud", kind="mention_rate", rate=0.6, baseline=0.45, p=0.03):
    return (DAY, PLATFORM, kind, category, subject, "up", rate, rate - 0.15, rate + 0.15, baseline, baseline - 0.05,
            baseline + 0.05, rate - baseline, 2.2, p, 0.3 if decision == "borderline" else 0.05, 40, decision, 18,
            120, 7, NOW, "run-1")


def _seed_warehouse(config, alert_rows):
    """The day's nightly journal on one platform (every question asked) and the alerts the model found."""
    journal = [(r.request_key, DAY, r.platform, r.question_id, r.question_text, r.category, r.scene, r.round,
                r.priority, r.model, r.params_json, r.prompt_hash, "succeeded", 1, None, None, NOW, None, r.variant)
               for r in plan_requests(config, config.platform(PLATFORM), DAY.isoformat())]

    def work(conn):
        ensure_table(conn, JOURNAL_REQUESTS)
        insert_batch(conn, JOURNAL_REQUESTS, JOURNAL_REQUESTS.batch(journal))
        conn.execute(f"CREATE TABLE fct_visibility_alerts ({ALERT_COLUMNS})")
        values = ", ".join(["(" + ", ".join(["?"] * len(alert_rows[0])) + ")"] * len(alert_rows))
        conn.execute(f"INSERT INTO fct_visibility_alerts VALUES {values}", [v for row in alert_rows for v in row])

    write_warehouse(work)


@pytest.mark.slow  # over a second by design
def test_two_alerts_of_a_category_make_one_task_and_a_second_evaluation_none(tmp_path, visibility_home):
    config = _config(tmp_path)
    _seed_warehouse(config, [
        _alert_row("阿里云", "borderline"), _alert_row("腾讯云", "borderline", p=0.04),
        _alert_row("小米", "alert", "phone", p=0.001), _alert_row("refusal", "borderline", None, "refusal_share")])
    resources, instance = build_resources(config), DagsterInstance.ephemeral()

    [request] = collection_task_sensor(build_sensor_context(instance=instance, resources=resources)).run_requests
    assert request.partition_key == f"{DAY.isoformat()}|{PLATFORM}"
    assert int(request.tags[PRIORITY_TAG]) > 0
    task_id = request.tags[TASK_TAG]
    assert request.run_config == {"ops": {"raw_ai_responses": {"config": {"task_id": task_id}}}}
    again = collection_task_sensor(build_sensor_context(instance=instance, resources=resources))
    assert not again.run_requests

    with read_warehouse() as conn:  # what both evaluations stored
        outcomes = dict(conn.execute("SELECT subject, outcome FROM collection_events").fetchall())
        linked = conn.execute("SELECT task_id, outcome FROM collection_events WHERE task_id IS NOT NULL"
                              " ORDER BY outcome DESC").fetchall()
        why = [r for (r,) in conn.execute("SELECT e.reason FROM collection_events AS e JOIN collection_tasks"
                                          " AS t USING (task_id) ORDER BY e.p_value").fetchall()]
        tasks = conn.execute("SELECT category, state, first_round, len(history) FROM collection_tasks").fetchall()
    assert outcomes == {"阿里云": NEW_TASK, "腾讯云": MERGED, "小米": NOTIFIED, "refusal": RECORDED}  # 4 events
    assert linked == [(task_id, NEW_TASK), (task_id, MERGED)]
    assert tasks == [("cloud", REQUESTED, 3, 2)]  # one task: planned, then requested once
    assert "阿里云 mention rate up" in why[0] and "borderline" in why[0] and "腾讯云" in why[1]


# --- dispatch -------------------------------------------------------------------------------

def _requested(config, *events, now=NOW) -> list[Task]:
    tasks = _plan(config, events or [_event("阿里云")], now=now).new_tasks
    dispatch(tasks, config, {}, now)
    assert {t.state for t in tasks} == {REQUESTED}
    return tasks


def test_a_failed_run_is_retried_at_a_lower_priority_until_max_attempts(tmp_path):
    config = _config(tmp_path)  # 3 attempts, 10 points less per retry
    [task] = _requested(config)
    first = task.effective_priority
    for attempt in (1, 2):
        [request], changed = dispatch([task], config, {task.task_id: (f"run-{attempt}", DagsterRunStatus.FAILURE)},
                                      NOW)
        assert changed == [task] and task.retries == attempt and task.state == REQUESTED
        assert [h["state"] for h in task.history[-2:]] == [PLANNED, REQUESTED]
        assert int(request.tags[PRIORITY_TAG]) == task.effective_priority == first - 10 * attempt
        assert request.run_key == f"task-{task.task_id}-{attempt}"
    requests, _ = dispatch([task], config, {task.task_id: ("run-3", DagsterRunStatus.FAILURE)}, NOW)
    assert (requests, task.state, task.retries, task.run_id) == ([], FAILED, 3, "run-3")
    assert dispatch([task], config, {}, NOW + timedelta(hours=1)) == ([], [])


def test_a_successful_run_makes_its_task_done(tmp_path):
    config = _config(tmp_path)
    [task] = _requested(config)
    requests, changed = dispatch([task], config, {task.task_id: ("run-1", DagsterRunStatus.SUCCESS)}, NOW)
    assert (requests, changed, task.state, task.run_id) == ([], [task], DONE, "run-1")
    still_running = _requested(config, _event("小米", "phone"))
    assert dispatch(still_running, config, {still_running[0].task_id: ("r", DagsterRunStatus.STARTED)}, NOW) == (
        [], [])


def test_planned_tasks_are_requested_highest_effective_priority_first(tmp_path):
    config = _config(tmp_path)
    small, large = _event("阿里云", change=0.02), _event("小米", "phone", change=0.25)
    ask = _event("ann", kind="adhoc", change=None, question_ids=("q012",), rounds=1)
    tasks = _plan(config, [small, large, ask]).new_tasks
    requests, _ = dispatch(tasks, config, {}, NOW)
    assert [int(r.tags[PRIORITY_TAG]) for r in requests] == [80, 75, 52]
    assert [r.tags["visibility/task_kind"] for r in requests] == ["adhoc", "alert", "alert"]


def test_a_requested_task_whose_run_never_appeared_is_planned_again_after_the_grace(tmp_path):
    config = _config(tmp_path)
    [task] = _requested(config)
    assert dispatch([task], config, {}, NOW + LAUNCH_GRACE) == ([], [])
    [request], changed = dispatch([task], config, {}, NOW + LAUNCH_GRACE + timedelta(seconds=1))
    assert changed == [task] and task.retries == 0 and request.run_key == f"task-{task.task_id}-0"
    assert [h["state"] for h in task.history] == [PLANNED, REQUESTED, PLANNED, REQUESTED]


def test_the_failed_run_of_an_earlier_attempt_is_not_counted_twice(tmp_path):
    config = _config(tmp_path)
    [task] = _requested(config)
    failed = {task.task_id: ("run-1", DagsterRunStatus.FAILURE)}
    dispatch([task], config, failed, NOW)  # retry 1 requested; its run has not appeared yet
    dispatch([task], config, failed, NOW + timedelta(seconds=30))
    assert task.retries == 1


# --- events.yaml ----------------------------------------------------------------------------

@pytest.mark.parametrize("text, line, problem", [
    ("events:\n  merge_window_minutes: 30\n  merge_windw: 5\n", 3, "unknown key 'events.merge_windw'"),
    ("events:\n  alert_extra_rounds: 2\n  priority:\n    sla_max: -1\n", 4, "'events.priority.sla_max'"),
    ("notifications:\n  webhooks:\n    - name: team\n      format: teams\n      url_env: TEAM_URL\n", 4,
     "'notifications.webhooks.0.format'"),
])
def test_an_events_yaml_error_names_the_file_and_line(tmp_path, text, line, problem):
    directory = _config_dir(tmp_path)
    (directory / "events.yaml").write_text(text, encoding="utf-8")
    with pytest.raises(ConfigError) as raised:
        load_config(directory)
    [message] = raised.value.problems
    assert message.startswith(f"events.yaml line {line}: ") and problem in message


def test_without_events_yaml_every_default_applies(tmp_path):
    config = _config(tmp_path)
    assert (config.events, config.notifications) == (EventSettings(), Notifications())
    assert config.events.priority.base["adhoc"] > config.events.priority.base["alert"] > 0


def test_setting_one_base_priority_keeps_the_others(tmp_path):
    config = _config(tmp_path, {"priority": {"base": {"alert": 60}}})
    assert config.events.priority.base["adhoc"] == PriorityWeights().base["adhoc"]


def test_a_parse_success_that_falls_against_its_trailing_week_is_an_event():
    """Quality events are recorded (more samples would not fix a platform's malformed bodies)."""
    import duckdb

    from visibility_assets.events.detect import quality_events
    from visibility_assets.events.service import _quality_figures

    conn = duckdb.connect()
    conn.execute("CREATE TABLE fct_collection_quality AS SELECT DATE '2026-11-01' + i::INTEGER AS date,"
                 " 'qwen' AS platform, CASE WHEN i = 9 THEN 0.7 ELSE 0.99 END AS parse_success,"
                 " CASE WHEN i = 9 THEN 0.95 ELSE 1.0 END AS success_share FROM range(10) AS t(i)")
    events = quality_events(_quality_figures(conn, date(2026, 11, 9)), datetime(2026, 11, 11, tzinfo=UTC))
    assert [(e.date, e.subject, e.collects) for e in events] == [(date(2026, 11, 10), "parse_success", False)]
    assert "70.0%" in events[0].reason and "99.0%" in events[0].reason
