"""`visibility demo` end to end, as a user runs it: from a wheel built from the checkout,
installed into a fresh virtualenv, in an empty folder, on a trimmed config."""

import json
import os
import socket
import subprocess
import sys
import sysconfig
from datetime import timedelta
from pathlib import Path

import pytest

from tests.conftest import write_config

CHECKOUT = Path(__file__).parents[2]

pytestmark = pytest.mark.system


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def installed(tmp_path_factory) -> Path:
    """A fresh virtualenv, outside the checkout, with the wheel built from the checkout installed.

    Its dependencies come from the test environment's site-packages through a .pth line (a path
    line only: the checkout's editable install there is not activated), which saves installing
    Dagster again; the project itself is the wheel's copy."""
    root = tmp_path_factory.mktemp("wheel")
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--quiet", "-w", str(root / "dist"),
                    str(CHECKOUT)], check=True, timeout=600)
    (wheel,) = (root / "dist").glob("visibility_assets-*.whl")
    subprocess.run([sys.executable, "-m", "venv", str(root / "venv")], check=True)
    python = root / "venv" / "bin" / "python"
    site = subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                          capture_output=True, text=True, check=True).stdout.strip()
    Path(site, "test_dependencies.pth").write_text(sysconfig.get_paths()["purelib"] + "\n", encoding="utf-8")
    subprocess.run([str(python), "-m", "pip", "install", "--quiet", "--no-deps", str(wheel)], check=True, timeout=900)
    for tool in ("dagster",):  # the entry points of the dependencies the tests call
        script = root / "venv" / "bin" / tool
        script.write_text(f"#!{python}\nimport sys\nfrom dagster._cli import main\nsys.exit(main())\n")
        script.chmod(0o755)
    return root / "venv" / "bin"


def _env(home: Path) -> dict:
    env = {key: value for key, value in os.environ.items()
           if key not in ("DAGSTER_HOME", "VIRTUAL_ENV", "PYTHONPATH", "VISIBILITY_CONFIG_DIR")}
    return {**env, "VISIBILITY_HOME": str(home)}


def test_the_installed_wheel_finds_its_sql_models_and_validates(installed, tmp_path):
    empty = tmp_path / "empty"
    empty.mkdir()
    result = subprocess.run([str(installed / "dagster"), "definitions", "validate", "-m", "visibility_assets.definitions"],
                            cwd=empty, capture_output=True, text=True, env=_env(tmp_path / "home"), timeout=300)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "passed validation" in result.stdout + result.stderr


@pytest.mark.long
def test_demo_collects_every_platform_and_prints_a_summary(installed, tmp_path, monkeypatch):
    # At 10 rps Kimi's night (two requests an answer) is 0.5 s longer than the others': a head start.
    config = write_config(tmp_path / "config", _free_port(), questions=5, rounds=1, rate_limit_rps=10)
    home, empty = tmp_path / "home", tmp_path / "empty"
    empty.mkdir()
    result = subprocess.run(
        [str(installed / "visibility"), "--config-dir", str(config), "demo", "--date", "2026-11-03"],
        cwd=empty, capture_output=True, text=True, env=_env(home), timeout=300,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    for platform in ("deepseek", "qwen", "ernie", "hunyuan", "doubao", "kimi"):
        assert f"2026-11-03  {platform}" in result.stdout
    assert (home / "dagster_home" / "dagster.yaml").exists()
    report = next(line.split("report: ", 1)[1] for line in result.stdout.splitlines() if line.startswith("report: "))
    assert report.endswith("visibility_report_2026-11-03.html") and "<svg" in open(report, encoding="utf-8").read()
    counted = subprocess.run([str(installed / "visibility"), "sql", "SELECT count(*) AS n FROM raw_ai_responses",
                              "--format", "json"], capture_output=True, text=True, cwd=empty, env=_env(home))
    assert json.loads(counted.stdout) == [{"n": 6 * 5}], counted.stderr
    monkeypatch.setenv("DAGSTER_HOME", str(home / "dagster_home"))  # its dagster.yaml reads it
    _the_slowest_platform_started_first_by_its_head_start(home, config)
    _the_installed_workspace_serves_its_pages(installed, empty, _env(home), config)
    _a_copy_of_the_data_directory_elsewhere_works_on(installed, empty, home, config)


def _the_slowest_platform_started_first_by_its_head_start(home: Path, config: Path) -> None:
    """Kimi (a tool loop: two requests an answer) bounds the night: its run starts alone, and the
    others once its head start has passed."""
    from dagster import DagsterInstance

    from visibility_assets.config import load_config
    from visibility_assets.tools.demo import head_start_s, platform_bounds_s

    bounds = platform_bounds_s(load_config(config))
    head_start = head_start_s(bounds)
    assert max(bounds, key=bounds.get) == "kimi" and head_start >= 0.2
    instance = DagsterInstance.from_config(str(home / "dagster_home"))
    created = {record.dagster_run.tags["dagster/partition/platform"]: record.create_timestamp.timestamp()
               for record in instance.get_run_records() if "dagster/partition/platform" in record.dagster_run.tags}
    first = created.pop("kimi")
    assert len(created) == 5 and min(created.values()) - first >= head_start - 0.05


def _a_copy_of_the_data_directory_elsewhere_works_on(installed: Path, cwd: Path, home: Path, config: Path) -> None:
    """`cp -a` of the data directory to another path, the original gone: the copy answers
    `visibility sql` and `visibility explain`, and collects a further day (the lake's catalog
    remembers the data path it was made with; the copy reads its data where it now is)."""
    moved = home.parent / "restored" / "visibility"
    moved.parent.mkdir()
    subprocess.run(["cp", "-a", str(home), str(moved)], check=True)
    home.rename(home.parent / "original-gone")
    env = _env(moved)

    def visibility(*arguments: str) -> subprocess.CompletedProcess:
        return subprocess.run([str(installed / "visibility"), "--config-dir", str(config), *arguments],
                              capture_output=True, text=True, cwd=cwd, env=env, timeout=300)

    counted = visibility("sql", "SELECT count(*) AS n FROM raw_ai_responses", "--format", "json")
    assert json.loads(counted.stdout) == [{"n": 6 * 5}], counted.stderr
    explained = visibility("explain", "--date", "2026-11-03", "--platform", "kimi", "--brand", "阿里云")
    assert explained.returncode == 0 and "mention_metrics 2026-11-03 kimi 阿里云" in explained.stdout, explained.stderr
    further = visibility("demo", "--date", "2026-11-04")
    assert further.returncode == 0, further.stdout + further.stderr
    days = visibility("sql", "SELECT date, count(*) AS n FROM raw_ai_responses GROUP BY 1 ORDER BY 1", "--format", "json")
    assert json.loads(days.stdout) == [{"date": "2026-11-03", "n": 30}, {"date": "2026-11-04", "n": 30}]


def _the_installed_workspace_serves_its_pages(installed: Path, cwd: Path, env: dict, config: Path) -> None:
    """The wheel carries the workspace's templates and scripts: `visibility serve` of the
    installed package shows the login page and serves ECharts from itself."""
    import httpx

    from visibility_assets.tools.bench.serve import running_workspace

    command = [str(installed / "visibility"), "--config-dir", str(config), "serve", "--workers", "1"]
    with running_workspace(command, env, cwd) as base:
        assert "AI visibility workspace" in httpx.get(base + "/login").text
        assert httpx.get(base + "/static/echarts.min.js").status_code == 200
        assert httpx.get(base + "/overview", follow_redirects=False).status_code == 303

def test_demo_rejects_a_bad_date_without_traceback(tmp_path):
    result = subprocess.run([sys.executable, "-m", "visibility_assets.cli", "demo", "--date", "2026-13-01"],
                            capture_output=True, text=True, env={**os.environ, "VISIBILITY_HOME": str(tmp_path)})
    assert result.returncode == 2
    assert "not a date" in result.stderr and "Traceback" not in result.stderr


def _today() -> str:
    from visibility_assets.core.days import yesterday
    return (yesterday() + timedelta(days=1)).isoformat()


@pytest.mark.parametrize("args, said", [
    (["demo", "--date", "today"], "--date {today}: the days that can be collected run from 2025-01-01"),
    (["demo", "--date", "2019-06-01"], "--date 2019-06-01: the days that can be collected run from 2025-01-01"),
    (["demo", "--date", "2025-01-05", "--days", "10"], "--date and --days: 2024-12-27 .. 2025-01-05: the days"),
    (["demo", "--date", "2026-11-01", "--days", "100000"], "--days 100000: at most 366 days at once"),
    (["backfill", "--since", "2024-01-01", "--until", "2026-11-01"], "--since and --until: 2024-01-01 .. 2026-11-01:"),
    (["ask", "--platform", "kimi", "--date", "today"], "--date {today}: the days that can be collected"),
])
def test_days_outside_the_partitions_are_refused_before_anything_is_written(tmp_path, monkeypatch, args, said):
    from tests.cli import visibility

    monkeypatch.setenv("VISIBILITY_HOME", str(tmp_path / "home"))
    result = visibility(*[_today() if arg == "today" else arg for arg in args])
    assert result.returncode == 2, result.stdout + result.stderr
    assert said.format(today=_today()) in result.stderr
    assert result.stderr.count("\n") == 1 and result.stdout == ""  # one line, no traceback
    assert not (tmp_path / "home").exists()


@pytest.mark.loopback
@pytest.mark.parametrize("holder", ["simulator", "other"])
def test_a_demo_never_borrows_what_listens_on_its_port_and_writes_nothing(tmp_path, monkeypatch, simulator, holder):
    """Another simulator (a `visibility simulate`, another installation's demo) or any other
    program on the config's port: the demo says so before it writes anything."""
    from tests.cli import visibility

    with socket.socket() as other:
        if holder == "simulator":
            port = simulator.port
        else:
            other.bind(("127.0.0.1", 0))
            other.listen()
            port = other.getsockname()[1]
        config = write_config(tmp_path / "config", port)
        monkeypatch.setenv("VISIBILITY_HOME", str(tmp_path / "home"))
        monkeypatch.delenv("DAGSTER_HOME", raising=False)
        result = visibility("--config-dir", str(config), "demo", "--date", "2026-11-05")
    assert result.returncode == 2 and f"cannot start the simulator on 127.0.0.1:{port}" in result.stderr
    says = "another simulator" if holder == "simulator" else "another program listens there"
    assert says in result.stderr and result.stdout == "" and "Traceback" not in result.stderr
    assert not (tmp_path / "home").exists()
