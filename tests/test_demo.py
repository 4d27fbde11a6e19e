"""`visibility demo` end to end, as a user runs it, on a trimmed config."""

import os
import socket
import subprocess
import sys

import duckdb
import pytest

from .conftest import write_config

pytestmark = pytest.mark.slow  # servers, processes or Dagster runs: the CI tier


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_demo_collects_every_platform_and_prints_a_summary(tmp_path):
    config = write_config(tmp_path / "config", _free_port(), questions=5, rounds=1)
    home = tmp_path / "home"
    env = {**os.environ, "VISIBILITY_HOME": str(home)}
    env.pop("DAGSTER_HOME", None)
    result = subprocess.run(
        [sys.executable, "-m", "visibility_assets.cli", "--config-dir", str(config), "demo", "--date", "2026-11-03"],
        capture_output=True, text=True, env=env, timeout=300,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    for platform in ("deepseek", "qwen", "ernie", "hunyuan", "doubao", "kimi"):
        assert f"2026-11-03  {platform}" in result.stdout
    assert (home / "dagster_home" / "dagster.yaml").exists()
    report = next(line.split("report: ", 1)[1] for line in result.stdout.splitlines() if line.startswith("report: "))
    assert report.endswith("visibility_report_2026-11-03.html") and "<svg" in open(report, encoding="utf-8").read()
    with duckdb.connect(str(home / "warehouse.duckdb"), read_only=True) as conn:
        assert conn.execute("SELECT count(*) FROM raw_ai_responses").fetchone()[0] == 6 * 5


def test_demo_rejects_a_bad_date_without_traceback(tmp_path):
    result = subprocess.run([sys.executable, "-m", "visibility_assets.cli", "demo", "--date", "2026-13-01"],
                            capture_output=True, text=True, env={**os.environ, "VISIBILITY_HOME": str(tmp_path)})
    assert result.returncode == 2
    assert "not a date" in result.stderr and "Traceback" not in result.stderr
