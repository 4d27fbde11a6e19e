"""`visibility judge calibrate`: the judge asked about labelled answers through the collector,
scored against the labels, against the simulator's judge that errs at a given rate."""

from __future__ import annotations

import json

import duckdb
import pytest

from tests.conftest import write_config
from visibility_assets.cli.main import main
from visibility_assets.config import EXAMPLE_CONFIG_DIR, load_config
from visibility_assets.judge.calibration import REPOSITORY, read_labelled_set
from visibility_assets.judge.calibration_run import latest_calibrations, reviewed_pairs
from visibility_assets.review.store import DOUBTFUL, RANDOM, MachineLabels, ReviewStore
from visibility_assets.tools.simulator.behaviour import PlatformBehaviour, SimulatorSettings
from visibility_assets.tools.simulator.server import SimulatorServer

JUDGE, ERROR_RATE, ANSWERS = "deepseek", 0.3, 120
SHIPPED = REPOSITORY / "tests" / "eval" / "sentiment.jsonl"


@pytest.fixture
def erring_judge(tmp_path, visibility_home, monkeypatch):
    behaviour = PlatformBehaviour(latency_s=(0.001, 0.005), judge_error_rate=ERROR_RATE)
    with SimulatorServer(SimulatorSettings(seed=3, platforms={JUDGE: behaviour}),
                         load_config(EXAMPLE_CONFIG_DIR)) as server:
        directory = write_config(tmp_path / "config", server.port, questions=2, rounds=1)
        (directory / "judge.yaml").write_text(f"judge:\n  platform: {JUDGE}\n", encoding="utf-8")
        monkeypatch.setenv("VISIBILITY_CONFIG_DIR", str(directory))
        yield server


def calibrate(capsys, *extra: str) -> tuple[int, dict | None, str]:
    code = main(["judge", "calibrate", "--set", str(SHIPPED), "--no-reviews", "--limit", str(ANSWERS),
                 "--format", "json", *extra])
    captured = capsys.readouterr()
    return code, json.loads(captured.out) if captured.out.strip() else None, captured.err


def journal(sql: str) -> list[tuple]:
    from tests.pipeline import read_warehouse
    with read_warehouse() as conn:
        return conn.execute(sql).fetchall()


@pytest.mark.slow
@pytest.mark.loopback
def test_the_calibration_finds_the_error_rate_the_judge_was_given_at_the_cost_the_collector_recorded(
        erring_judge, capsys):
    code, report, told = calibrate(capsys)
    assert code == 0
    assert "expected cost:" in told and f"{ANSWERS} labelled answers" in told  # said before it sent
    assert report["answers"] == ANSWERS and report["requests_sent"] == ANSWERS and report["unjudged"] == 0
    low, high = report["overall"]["interval"]
    assert 1 - high <= ERROR_RATE <= 1 - low, report["overall"]
    assert report["by_language"].keys() == {"zh", "en"}
    recorded = journal("SELECT sum(cost) FROM journal_answers WHERE platform = 'judge:calibration'")[0][0]
    assert recorded > 0 and report["cost"] == pytest.approx(recorded)
    assert 0.3 < report["expected_cost"] / recorded < 3  # the estimate is of the right size
    assert journal("SELECT scope, scope_value, pairs FROM judge_calibrations WHERE scope = 'all'") == [
        ("all", "all", report["overall"]["n"])]
    assert journal("SELECT count(*), count(*) FILTER (WHERE label <> verdict) FROM judge_calibration_verdicts") == [
        (report["overall"]["n"], report["overall"]["n"] - report["overall"]["correct"])]
    from tests.pipeline import read_warehouse
    with read_warehouse() as conn:  # what the workspace shows beside the judge
        shown = {(row["scope"], row["scope_value"]): row for row in latest_calibrations(conn)}
    assert shown[("all", "all")]["judge"] == "deepseek-flash (prompt v1)"
    assert round(shown[("all", "all")]["accuracy"], 4) == report["overall"]["accuracy"]
    assert {value for scope, value in shown if scope == "language"} == {"zh", "en"}

    sent = erring_judge.app.stats[JUDGE].judged
    code, again, told = calibrate(capsys)  # judged before: read back, not paid again
    assert code == 0 and f"{ANSWERS} answers were judged before" in told
    assert erring_judge.app.stats[JUDGE].judged == sent and again["requests_sent"] == 0 and again["cost"] is None
    assert again["overall"] == report["overall"]


@pytest.mark.slow
@pytest.mark.loopback
def test_a_dry_run_prints_the_plan_and_sends_nothing(erring_judge, capsys):
    code, report, told = calibrate(capsys, "--dry-run")
    assert code == 0 and report is None and "expected cost:" in told
    assert erring_judge.app.stats[JUDGE].judged == 0


@pytest.mark.slow
@pytest.mark.loopback
def test_a_bad_line_in_a_labelled_set_is_named_and_nothing_is_sent(erring_judge, tmp_path, capsys):
    bad = tmp_path / "labels.jsonl"
    good = SHIPPED.read_text(encoding="utf-8").splitlines()[0]
    bad.write_text(good + "\n" + good.replace('"sentiment": "neutral"', '"sentiment": "mixed"') + "\n",
                   encoding="utf-8")
    code = main(["judge", "calibrate", "--set", str(bad), "--no-reviews"])
    err = capsys.readouterr().err
    assert code == 2 and f"{bad}:2: sentiment 'mixed' is not one of" in err and "Traceback" not in err
    assert erring_judge.app.stats[JUDGE].judged == 0


def test_without_a_judge_there_is_nothing_to_calibrate(visibility_home, capsys):
    assert main(["judge", "calibrate", "--no-reviews"]) == 2
    assert "no judge.yaml" in capsys.readouterr().err


def test_only_the_random_samples_reviews_with_a_tone_join_the_calibration(tmp_path):
    store = ReviewStore(tmp_path / "reviews.sqlite")
    conn = duckdb.connect()
    conn.execute("CREATE TABLE raw_ai_responses (request_key VARCHAR, question_text VARCHAR, answer_text VARCHAR,"
                 " category VARCHAR)")
    for key, queue, tone in (("k1", RANDOM, "negative"), ("k2", DOUBTFUL, "positive"), ("k3", RANDOM, None)):
        conn.execute("INSERT INTO raw_ai_responses VALUES (?, '哪家云好？', ?, 'cloud')", [key, f"腾讯云 {key}"])
        machine = MachineLabels(key, "腾讯云", "2026-10-01", "qwen", "cloud", "zh-Hans", "1.6.0", None,
                                {"mentioned": True, "mention_count": 1, "list_rank": None, "recommended": True,
                                 "sentiment": "neutral"}, dict.fromkeys(
                                    ("mentioned", "mention_count", "list_rank", "recommended"), "analyzer")
                                | {"sentiment": "analyzer"})
        store.deal("rita", key, "腾讯云", queue)
        values = {**machine.values, "sentiment": tone} if tone else {  # not named: no tone to judge
            **machine.values, "mentioned": False, "mention_count": 0, "recommended": None, "sentiment": None}
        store.record("rita", queue, machine, values)
    pairs = reviewed_pairs(store, conn)
    assert [(p.set_name, p.item_id, p.brand, p.label, p.language, p.answer) for p in pairs] == [
        ("reviews", "k1", "腾讯云", "negative", "zh", "腾讯云 k1")]


def test_the_shipped_set_reads_as_labelled_pairs():
    pairs = read_labelled_set(SHIPPED)
    assert len(pairs) == 642 and {p.label for p in pairs} == {"positive", "neutral", "negative"}
    assert {p.language for p in pairs} == {"zh", "en"}
