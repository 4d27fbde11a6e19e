"""The cost plan: what the next night will cost, per platform, said before it runs; measured
against what the night then cost as the collector recorded it."""

from __future__ import annotations

import json
from datetime import date, timedelta

import pytest

from tests.cli import visibility
from tests.conftest import IN_PROCESS_URL, write_config
from tests.workspace_lake import build_lake
from visibility_assets.config import load_config
from visibility_assets.report.cost_plan import plan_costs, read_history
from visibility_assets.warehouse.lake import open_reader

LAST_DAY = date(2026, 11, 10)
PLATFORMS = ("qwen", "kimi")  # a search in the request, and a search that is a tool loop (two requests)


@pytest.mark.slow
def test_the_plan_from_a_week_of_answers_is_within_10_percent_of_what_the_next_night_cost(tmp_path):
    config = load_config(write_config(tmp_path / "config", IN_PROCESS_URL, questions=None, rounds=3,
                                      web_search=True))
    lake = build_lake(tmp_path, config, LAST_DAY, 7, PLATFORMS)
    night = LAST_DAY + timedelta(days=1)
    with open_reader(lake) as conn:
        plan = plan_costs(config, read_history(conn, config, night), night, 30)
    build_lake(tmp_path, config, night, 1, PLATFORMS)
    with open_reader(lake) as conn:
        actual = dict(conn.execute("SELECT platform, sum(cost) FROM journal_answers WHERE date = ?"
                                   " GROUP BY platform", [night]).fetchall())
    planned = {row.name: row for row in plan.collection}
    for name in PLATFORMS:
        row = planned[name]
        assert row.usage.basis == "history" and row.usage.answers_seen >= 7 * row.answers * 0.9
        assert abs(row.cost_per_night - actual[name]) <= 0.10 * actual[name], (name, row.cost_per_night, actual[name])
        assert row.as_json(30)["cost_per_days"] == pytest.approx(row.cost_per_night * 30, rel=1e-3)
    assert planned["kimi"].requests == 2 * planned["kimi"].answers  # the question, then the search's result
    assert planned["kimi"].usage.searches > 0  # its $web_search runs, and is billed, on every answer


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
