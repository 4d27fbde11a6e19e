"""The cost plan: what the next night will cost, per platform, said before it runs; measured
against what the night then cost as the collector recorded it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from datetime import date, timedelta
from pathlib import Path

import pytest

from tests.cli import visibility
from tests.conftest import IN_PROCESS_URL, write_config
from tests.report.week_lake import PLATFORMS
from visibility_assets.config import load_config

LAST_DAY = date(2026, 11, 10)
REPO = Path(__file__).resolve().parents[2]


def _run(home: Path, *command: str) -> str:
    done = subprocess.run([sys.executable, *command], cwd=REPO, capture_output=True, text=True, timeout=600,
                          env={**os.environ, "VISIBILITY_HOME": str(home)})
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    return done.stdout


@pytest.mark.slow
def test_the_plan_from_a_week_of_answers_is_within_10_percent_of_what_the_next_night_cost(tmp_path):
    config_dir = write_config(tmp_path / "config", IN_PROCESS_URL, questions=None, rounds=3, web_search=True)
    night = LAST_DAY + timedelta(days=1)
    _run(tmp_path, "-m", "tests.report.week_lake", str(tmp_path), str(config_dir), LAST_DAY.isoformat(), "7")
    plan = json.loads(_run(tmp_path, "-m", "visibility_assets.cli", "--config-dir", str(config_dir), "plan",
                           "--date", night.isoformat(), "--days", "30", "--format", "json").splitlines()[-1])
    _run(tmp_path, "-m", "tests.report.week_lake", str(tmp_path), str(config_dir), night.isoformat(), "1")
    rows = json.loads(_run(tmp_path, "-m", "visibility_assets.cli", "--config-dir", str(config_dir), "sql",
                           "SELECT platform, sum(cost) AS cost FROM journal_answers WHERE date = DATE '"
                           + night.isoformat() + "' GROUP BY platform", "--format", "json"))
    actual = {row["platform"]: row["cost"] for row in rows}
    planned = {row["platform"]: row for row in plan["platforms"] if row["platform"] in PLATFORMS}
    for name in PLATFORMS:
        row = planned[name]
        assert row["cost_basis"] == "history" and row["history_answers"] >= 7 * row["answers_per_night"] * 0.9
        assert abs(row["cost_per_night"] - actual[name]) <= 0.10 * actual[name], (name, row, actual[name])
        assert row["cost_per_days"] == pytest.approx(row["cost_per_night"] * 30, rel=1e-3)
    assert planned["kimi"]["requests_per_night"] == 2 * planned["kimi"]["answers_per_night"]  # question, then search
    assert planned["kimi"]["searches_per_night"] > 0  # its $web_search runs, and is billed, on every answer


def test_visibility_plan_without_history_estimates_every_platform_and_says_so(tmp_path, monkeypatch):
    monkeypatch.setenv("VISIBILITY_HOME", str(tmp_path))
    done = visibility("plan", "--format", "json", "--days", "7", "--date", "2026-11-20")
    assert done.returncode == 0, done.stderr
    plan = json.loads(done.stdout)
    config = load_config()
    assert [row["platform"] for row in plan["platforms"]] == [p.name for p in config.platforms]
    for row in plan["platforms"]:
        assert row["cost_basis"] == "estimate" and row["currency"] == "CNY"
        assert row["requests_per_night"] >= row["answers_per_night"] > 0
        assert row["prompt_tokens_per_night"] > 0 and row["completion_tokens_per_night"] > 0
        assert row["cost_per_days"] == pytest.approx(row["cost_per_night"] * 7, rel=1e-3)
    assert plan["total_per_night"] == pytest.approx(sum(r["cost_per_night"] for r in plan["platforms"]), rel=1e-6)
    table = visibility("plan", "--date", "2026-11-20")
    assert table.returncode == 0 and "estimate" in table.stdout and "total:" in table.stdout


def test_a_cap_the_plan_exceeds_is_said(tmp_path, monkeypatch):
    directory = write_config(tmp_path / "config", IN_PROCESS_URL, questions=None, rounds=3, max_cost_per_day=0.01)
    monkeypatch.setenv("VISIBILITY_HOME", str(tmp_path))
    plan = json.loads(visibility("--config-dir", str(directory), "plan", "--format", "json").stdout)
    assert all(row["max_cost_per_day"] == 0.01 and row["cap_holds"] is False for row in plan["platforms"])
    assert "NO" in visibility("--config-dir", str(directory), "plan").stdout


def test_a_bad_argument_is_one_line_and_exit_2(tmp_path, monkeypatch):
    monkeypatch.setenv("VISIBILITY_HOME", str(tmp_path))
    done = visibility("plan", "--days", "0")
    assert done.returncode == 2 and "positive integer" in done.stderr and "Traceback" not in done.stderr


def test_the_judges_calls_come_from_its_journal_pooled_over_the_platforms_it_judged(tmp_path):
    from visibility_assets.report.cost_plan import PerAnswer, plan_costs

    directory = write_config(tmp_path / "config", IN_PROCESS_URL)
    (directory / "judge.yaml").write_text("judge:\n  platform: deepseek\n  max_cost_per_day: 0.001\n", encoding="utf-8")
    config = load_config(directory)
    history = {"judge:deepseek": PerAnswer(1000, 200, 0, 0, "history", 70, 10.0),
               "judge:kimi": PerAnswer(2000, 300, 0, 0, "history", 30, 5.0)}
    judge = plan_costs(config, history, date(2026, 11, 20), 7).judge
    assert judge.name == "judge (deepseek)" and judge.answers == 15  # calls a night, both platforms
    assert judge.usage.prompt_tokens == 1300 and judge.usage.completion_tokens == 230  # per call, over 100 calls
    price = config.price("deepseek", judge.model, date(2026, 11, 20))
    expected = (1300 * price.input_per_mtok + 230 * price.output_per_mtok) / 1e6
    assert judge.cost_per_answer == pytest.approx(expected, rel=1e-6) and judge.cap_holds is False
    without = plan_costs(config, {}, date(2026, 11, 20), 7).judge  # never judged: every answer, an estimate
    assert without.usage.basis == "estimate"
    assert without.answers == sum(row.answers for row in plan_costs(config, {}, date(2026, 11, 20), 7).collection)
