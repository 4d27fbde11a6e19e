"""Faults told apart: every failed run and every fault carries its class (source: the platform;
rule: the analyzer, the config, the pipeline; downstream: the warehouse, a webhook, the disk, the
machine), and a webhook receives only the classes it is routed for."""

import logging
from datetime import date

import httpx
import pytest
import yaml
from dagster import DagsterEventType, DagsterInstance, Failure, asset, build_run_status_sensor_context, materialize

from tests.conftest import in_process, write_config
from tests.pipeline import materialize_for, pipeline, read_warehouse
from tests.sql_models_harness import DAY, Warehouse, row
from tests.webhook_receiver import Reply
from visibility_assets.config import load_config
from visibility_assets.core.faults import FAULT_CLASS_TAG, class_of_error, is_disk_full
from visibility_assets.core.partitions import Partition
from visibility_assets.definitions import build_resources
from visibility_assets.notify import AlertMessage, notify
from visibility_assets.operate.failed_runs import fault_of_failed_run, report_failed_run
from visibility_assets.report.quality import faults_section
from visibility_assets.tools.simulator.behaviour import PlatformBehaviour, SimulatorSettings
from visibility_assets.tools.simulator.transport import IN_PROCESS_URL
from visibility_assets.warehouse.lake import lake_settings
from visibility_assets.warehouse.resource import WarehouseResource

RUN_DAY = "2026-11-09"
ROUTES = {"ops": ["source", "downstream"], "brand": ["brand"], "rules": ["rule"], "broken": ["rule"]}


def _events_yaml(directory, receiver, monkeypatch) -> None:
    webhooks = []
    for name, classes in ROUTES.items():
        monkeypatch.setenv(f"TEST_{name.upper()}_URL", f"{receiver.base}/{name}")
        receiver.on(f"/{name}", Reply(500, "down for maintenance") if name == "broken" else Reply(204, ""))
        webhooks.append({"name": name, "format": "json", "url_env": f"TEST_{name.upper()}_URL", "classes": classes,
                         "max_attempts": 1})
    (directory / "events.yaml").write_text(yaml.safe_dump({"notifications": {"webhooks": webhooks}}),
                                           encoding="utf-8")


def _received(receiver) -> dict[str, list[tuple[str, str]]]:
    return {name: [(r.json.get("fault_class"), r.json.get("kind")) for r in receiver.to(f"/{name}")]
            for name in ROUTES}


@pytest.mark.dagster
def test_failed_runs_carry_their_class_and_each_webhook_gets_only_its_classes(visibility_home, tmp_path,
                                                                              monkeypatch, receiver):
    settings = SimulatorSettings(seed=1, default=PlatformBehaviour(latency_s=(0, 0.002)),
                                 platforms={"qwen": PlatformBehaviour(latency_s=(0, 0.002), billing_error=True)})
    monkeypatch.setenv("EMPTY_KEY", "")
    config_dir = write_config(tmp_path / "config", IN_PROCESS_URL, questions=4, rounds=1)
    platforms = yaml.safe_load((config_dir / "platforms.yaml").read_text(encoding="utf-8"))
    next(p for p in platforms["platforms"] if p["name"] == "deepseek")["api_key_env"] = "EMPTY_KEY"
    (config_dir / "platforms.yaml").write_text(yaml.safe_dump(platforms, allow_unicode=True), encoding="utf-8")
    _events_yaml(config_dir, receiver, monkeypatch)
    monkeypatch.setenv("VISIBILITY_CONFIG_DIR", str(config_dir))
    config, instance, defs = load_config(), DagsterInstance.ephemeral(), pipeline()
    warehouse = WarehouseResource.from_settings(lake_settings())

    with in_process(settings):
        billing = materialize_for(["raw_ai_responses"], RUN_DAY, "qwen", instance, defs)  # the platform's
        no_key = materialize_for(["raw_ai_responses"], RUN_DAY, "deepseek", instance, defs)  # the config's
    assert not billing.success and not no_key.success
    faults = {run.run_id: report_failed_run(instance, instance.get_run_by_id(run.run_id), config, warehouse)
              for run in (billing, no_key)}
    assert faults[billing.run_id].fault_class == "source" and "balance" in faults[billing.run_id].detail
    assert faults[no_key.run_id].fault_class == "rule" and "EMPTY_KEY" in faults[no_key.run_id].detail
    assert {instance.get_run_by_id(r).tags[FAULT_CLASS_TAG] for r in faults} == {"source", "rule"}
    with read_warehouse() as conn:
        stored = dict(conn.execute("SELECT run_id, fault_class FROM fault_events WHERE kind = 'run_failed'").fetchall())
        runs = dict(conn.execute("SELECT platform, fault_class FROM collection_runs").fetchall())
    assert stored == {billing.run_id: "source", no_key.run_id: "rule"}
    assert runs == {"qwen": "source"}  # a missing key stops before the partition is collected at all

    with httpx.Client() as client:  # a clear brand alert, as alert_notifications sends it
        notify(config.notifications.webhooks, [AlertMessage.from_row(ALERT_ROW, None)], warehouse, client,
               logging.getLogger("test"), "run-x")
    got = _received(receiver)
    assert got["ops"] == [("source", "run_failed"), ("downstream", "webhook_failed")]  # the broken webhook, told
    assert got["rules"] == [("rule", "run_failed")] and got["broken"] == [("rule", "run_failed")]
    assert got["brand"] == [("brand", "mention_rate")]
    with read_warehouse() as conn:
        (broken,) = conn.execute("SELECT fault_class, subject, detail FROM fault_events"
                                 " WHERE kind = 'webhook_failed'").fetchall()
    assert broken[:2] == ("downstream", "broken") and "500" in broken[2]


ALERT_ROW = {"date": date(2026, 11, 9), "platform": "qwen", "kind": "mention_rate", "category": "cloud",
             "subject": "阿里云", "direction": "up", "rate": 0.8, "rate_low": 0.6, "rate_high": 0.9,
             "baseline_rate": 0.5, "baseline_low": 0.4, "baseline_high": 0.6, "change": 0.3, "z": 3.1,
             "p_value": 0.002, "q_value": 0.05, "answers": 30, "baseline_answers": 120, "baseline_days": 7,
             "run_id": "r", "decision": "alert", "fault_class": "brand"}


def test_faults_by_class_counts_each_class_of_alert_and_fault_per_day_and_platform():
    warehouse = Warehouse()
    warehouse.insert("fault_events", [
        row("fault_events", fault_id="a", date=DAY, platform="qwen", kind="run_failed", fault_class="source",
            subject="nightly_platform_job", detail="down"),
        row("fault_events", fault_id="b", date=DAY, platform="qwen", kind="replay_diff", fault_class="rule",
            subject="analyzer 1.4.0", detail="12%"),
        row("fault_events", fault_id="c", date=DAY, platform=None, kind="webhook_failed", fault_class="downstream",
            subject="ops", detail="HTTP 500"),
    ])
    rows = {(r["platform"], r["fault_class"]): (r["alerts"], r["faults"], r["kinds"])
            for r in warehouse.build("faults_by_class", [Partition(DAY, "qwen")])}
    assert rows == {("qwen", "source"): (0, 1, ["run_failed"]), ("qwen", "rule"): (0, 1, ["replay_diff"]),
                    ("", "downstream"): (0, 1, ["webhook_failed"])}
    # The report's quality section splits them so, the platform's first.
    section = faults_section(warehouse.conn, DAY)
    assert section.index(">source<") < section.index(">rule<") < section.index(">downstream<")
    assert "replay_diff" in section and "<td>all</td>" in section


@pytest.mark.parametrize(("links", "expected"), [
    ([("DiskFull", "the disk is full")], "downstream"),
    ([("IOException", "IO Error: Could not write file \"x.parquet\": No space left on device")], "downstream"),
    ([("OperationalError", "database or disk is full")], "downstream"),
    ([("ConfigError", "questions.yaml line 3: ...")], "rule"),
    ([("KeyError", "'x'")], "rule"),
])
def test_a_failure_that_names_no_class_is_classed_by_its_exception_chain(links, expected):
    assert class_of_error(links) == expected


def test_a_full_disk_is_found_anywhere_in_the_chain():
    try:
        try:
            raise OSError(28, "No space left on device")
        except OSError as inner:
            raise RuntimeError("could not checkpoint") from inner
    except RuntimeError as outer:
        assert is_disk_full(outer)
    assert not is_disk_full(ValueError("nope"))


@pytest.mark.dagster
def test_the_run_failure_sensor_classes_a_failed_run_of_the_daemon(visibility_home, config_dir):
    @asset
    def refused_by_the_platform():
        raise Failure(description="qwen 2026-11-09: the platform is down", metadata={"fault_class": "source"})

    instance = DagsterInstance.ephemeral()
    result = materialize([refused_by_the_platform], instance=instance, raise_on_error=False)
    run = instance.get_run_by_id(result.run_id)
    failure = next(e for e in result.all_events if e.event_type == DagsterEventType.RUN_FAILURE)
    context = build_run_status_sensor_context(
        sensor_name="fault_of_failed_run", dagster_event=failure, dagster_instance=instance, dagster_run=run,
        resources=build_resources(load_config())).for_run_failure()
    fault_of_failed_run(context)
    assert instance.get_run_by_id(run.run_id).tags[FAULT_CLASS_TAG] == "source"
    with read_warehouse() as conn:
        assert conn.execute("SELECT fault_class, detail FROM fault_events").fetchall() == [
            ("source", "qwen 2026-11-09: the platform is down")]
