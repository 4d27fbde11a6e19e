"""Event-driven extra sampling end to end: a week on the simulator in which one brand's mention
rate on one platform jumps on the last day by an amount the nightly sample detects only
borderline; the sensor plans extra rounds, a real Dagster run collects them, and the alert's
decision becomes clear."""

from datetime import date, timedelta

import pytest
import yaml
from dagster import DagsterInstance, build_sensor_context

from tests.pipeline import pipeline, read_warehouse
from visibility_assets.operate.automation import backfill_tags
from visibility_assets.partition_run import QUIET_RUN, run_job
from visibility_assets.tools.simulator.behaviour import PlatformBehaviour, SimulatorSettings
from visibility_assets.tools.simulator.transport import IN_PROCESS_URL

from tests.conftest import FAST, in_process, write_config
from tests.webhook_receiver import Reply

pytestmark = pytest.mark.dagster  # three Dagster runs (a week, the extra rounds, a repeat), in process

PLATFORM, BRAND, CATEGORY = "qwen", "HubSpot", "crm"
LAST_DAY = date(2026, 11, 30)  # the simulator's answers depend on the day: fixed, so is the test
WEEK = [LAST_DAY - timedelta(days=offset) for offset in range(7, -1, -1)]
NIGHTLY_ROUNDS, EXTRA_ROUNDS_WANTED, BUDGET = 2, 6, 40
FACTOR = 2.62  # 14 of 17 answers name HubSpot that day, against 60 of 112 in the week before: p = 0.025


@pytest.fixture
def shifted_simulator():
    """HubSpot named 2.62x as readily by qwen from the last day on."""
    shift = PlatformBehaviour(latency_s=FAST.latency_s, brand_shifts=((BRAND, LAST_DAY.isoformat(), FACTOR),))
    settings = SimulatorSettings(seed=1, default=FAST, platforms={PLATFORM: shift})
    with in_process(settings) as simulated:
        yield simulated


@pytest.fixture
def crm_config(tmp_path, shifted_simulator, receiver, monkeypatch):
    """qwen alone, the nine crm questions, 2 rounds a night, 40 extra requests a day; alerts
    go to a JSON webhook on loopback."""
    directory = write_config(tmp_path / "config", IN_PROCESS_URL, questions=None, rounds=NIGHTLY_ROUNDS,
                             extra_requests_per_day=BUDGET)
    for name, key, keep in (("questions.yaml", "questions", lambda q: q["category"] == CATEGORY),
                            ("platforms.yaml", "platforms", lambda p: p["name"] == PLATFORM),
                            ("prices.yaml", "prices", lambda p: p["platform"] == PLATFORM)):
        data = yaml.safe_load((directory / name).read_text(encoding="utf-8"))
        data[key] = [entry for entry in data[key] if keep(entry)]
        (directory / name).write_text(yaml.safe_dump(data, allow_unicode=True), encoding="utf-8")
    (directory / "events.yaml").write_text(yaml.safe_dump({
        "events": {"alert_extra_rounds": EXTRA_ROUNDS_WANTED, "max_event_age_days": 0},
        "notifications": {"webhooks": [{"name": "team", "format": "json", "url_env": "TEAM_WEBHOOK_URL"}]}}))
    receiver.on("/hook", Reply(200, {"ok": True}))
    monkeypatch.setenv("TEAM_WEBHOOK_URL", f"{receiver.base}/hook")
    monkeypatch.setenv("VISIBILITY_CONFIG_DIR", str(directory))
    return directory


def _brand_on_last_day():
    with read_warehouse() as conn:
        metric = conn.execute(
            "SELECT valid_answers, mentioned_answers, mention_rate_low, mention_rate_high FROM mention_metrics"
            " WHERE date = $day AND platform = $platform AND brand = $brand",
            {"day": LAST_DAY, "platform": PLATFORM, "brand": BRAND}).fetchone()
        alert = conn.execute(
            "SELECT decision, p_value, q_value FROM visibility_alerts WHERE date = $day AND platform = $platform"
            " AND kind = 'mention_rate' AND subject = $brand", {"day": LAST_DAY, "platform": PLATFORM,
                                                                 "brand": BRAND}).fetchone()
    return metric, alert


def _received(simulator) -> int:
    return simulator.app.stats_json()[PLATFORM]["received"]


def _notified_about(receiver, brand: str) -> list[dict]:
    return [r.json for r in receiver.to("/hook") if r.json.get("subject") == brand]


def test_a_borderline_change_gets_extra_rounds_within_budget_and_its_decision_becomes_clear(
        visibility_home, crm_config, shifted_simulator, receiver):
    defs, instance = pipeline(), DagsterInstance.ephemeral()
    week = run_job(defs, "nightly_platform_job", instance, tags=backfill_tags(WEEK[0], LAST_DAY, PLATFORM))
    assert week.success
    nightly = len(WEEK) * 9 * NIGHTLY_ROUNDS
    assert _received(shifted_simulator) == nightly
    (n_before, x_before, low_before, high_before), alert_before = _brand_on_last_day()
    assert alert_before is not None and alert_before[0] == "borderline", alert_before
    assert not _notified_about(receiver, BRAND)  # borderline: more samples first, nobody paged
    p_value, q_value = alert_before[1], alert_before[2]
    assert p_value < 0.05 and not (p_value < 0.01 and q_value <= 0.10)  # the alerts' rule for borderline

    sensor = defs.resolve_sensor_def("collection_task_sensor")
    result = sensor(build_sensor_context(instance=instance, resources=defs.resources))
    [request] = result.run_requests
    assert request.partition_key == f"{LAST_DAY.isoformat()}|{PLATFORM}"
    assert int(request.tags["dagster/priority"]) > 0  # ahead of nightly runs and backfills (priority 0)
    with read_warehouse() as conn:
        task = conn.execute("SELECT task_id, question_ids, first_round, rounds, planned_requests, reason"
                            " FROM collection_tasks").fetch_arrow_table().to_pylist()[0]
    # Six extra rounds of nine questions were wanted; the budget of 40 leaves room for four.
    assert (len(task["question_ids"]), task["first_round"], task["rounds"]) == (9, NIGHTLY_ROUNDS + 1, 4)
    assert task["planned_requests"] == 36 <= BUDGET and BRAND in task["reason"]

    extra = run_job(defs, "nightly_platform_job", instance, {**QUIET_RUN, **request.run_config},
                    partition_key=request.partition_key, tags=request.tags)
    assert extra.success
    assert _received(shifted_simulator) - nightly == task["planned_requests"]
    (n_after, x_after, low_after, high_after), alert_after = _brand_on_last_day()
    print(f"{BRAND} on {PLATFORM} {LAST_DAY}: {x_before}/{n_before} [{low_before:.3f}, {high_before:.3f}]"
          f" width {high_before - low_before:.3f} -> {x_after}/{n_after} [{low_after:.3f}, {high_after:.3f}]"
          f" width {high_after - low_after:.3f}; decision {alert_before} -> {alert_after}")
    assert n_after > n_before and high_after - low_after < high_before - low_before
    assert alert_after is None or alert_after[0] == "alert"  # settled: a clear change, or none

    [message] = _notified_about(receiver, BRAND)
    assert message["decision"] == "alert" and message["platform"] == PLATFORM

    again = run_job(defs, "nightly_platform_job", instance, {**QUIET_RUN, **request.run_config},
                    partition_key=request.partition_key, tags=request.tags)
    assert again.success and _received(shifted_simulator) - nightly == task["planned_requests"]
    assert len(_notified_about(receiver, BRAND)) == 1  # the same alert never twice
    with read_warehouse() as conn:
        quality = conn.execute(
            "SELECT tasks, task_wait_s_avg, skipped_already_done, collection_runs, success_share, parse_success,"
            " alert_latency_s FROM fct_collection_quality WHERE date = $day", {"day": LAST_DAY}).fetchone()
    tasks, wait_s, skipped, runs, success, parsed, latency_s = quality
    assert (tasks, skipped, runs, success, parsed) == (1, 36, 3, 1.0, 1.0)  # the repeat sent nothing again
    assert wait_s >= 0 and latency_s >= 0

    second = sensor(build_sensor_context(instance=instance, resources=defs.resources))
    assert not second.run_requests
    with read_warehouse() as conn:
        states = conn.execute("SELECT state, len(history) FROM collection_tasks").fetchall()
        extra_rows = conn.execute("SELECT count(*), min(round), max(round) FROM raw_ai_responses"
                                  " WHERE task_id = $id", {"id": task["task_id"]}).fetchone()
        why = conn.execute(
            "SELECT e.kind, e.reason FROM raw_ai_responses AS r JOIN collection_tasks AS t USING (task_id)"
            " JOIN collection_events AS e ON list_contains(t.event_ids, e.event_id) LIMIT 1").fetchone()
    assert states == [("done", 3)]  # planned, requested, done
    assert extra_rows == (36, NIGHTLY_ROUNDS + 1, NIGHTLY_ROUNDS + 4)
    assert why[0] == "alert" and BRAND in why[1]
