"""The model-change canary over 30 simulated days: one platform switches its model on day 20."""

from datetime import date, timedelta

import pytest
import yaml

from tests.pipeline import pipeline, read_warehouse
from visibility_assets.config import EXAMPLE_CONFIG_DIR, load_config
from visibility_assets.operate.automation import backfill_tags
from visibility_assets.operate.instance import get_instance
from visibility_assets.runs import run_job
from visibility_assets.tools.simulator.behaviour import PlatformBehaviour, SimulatorSettings
from visibility_assets.tools.simulator.server import SimulatorServer

from .conftest import FAST, write_config

pytestmark = pytest.mark.slow  # a simulator and a 30-day Dagster run

FIRST, DAYS, SWITCH_AFTER = date(2026, 10, 1), 30, 19
SWITCH_DAY = FIRST + timedelta(days=SWITCH_AFTER)


@pytest.fixture
def switching_simulator():
    switch = PlatformBehaviour(latency_s=FAST.latency_s, model_switch=(SWITCH_DAY.isoformat(), "deepseek-v9"))
    with SimulatorServer(SimulatorSettings(seed=3, default=FAST, platforms={"deepseek": switch}),
                         load_config()) as server:
        yield server


@pytest.fixture
def canary_config(tmp_path, switching_simulator, monkeypatch):
    """DeepSeek alone, three questions and the shipped canary prompts, two rounds a night."""
    directory = write_config(tmp_path / "config", switching_simulator.port, questions=3, rounds=2)
    (directory / "canaries.yaml").write_text((EXAMPLE_CONFIG_DIR / "canaries.yaml").read_text(encoding="utf-8"),
                                             encoding="utf-8")
    for name, key in (("platforms.yaml", "platforms"), ("prices.yaml", "prices")):
        data = yaml.safe_load((directory / name).read_text(encoding="utf-8"))
        data[key] = [e for e in data[key] if e.get("name", e.get("platform")) == "deepseek"]
        (directory / name).write_text(yaml.safe_dump(data, allow_unicode=True), encoding="utf-8")
    monkeypatch.setenv("VISIBILITY_CONFIG_DIR", str(directory))
    return directory


def test_the_canary_flags_the_switch_day_and_no_other(visibility_home, canary_config):
    last = FIRST + timedelta(days=DAYS - 1)
    result = run_job(pipeline(), "nightly_platform_job", get_instance(), tags=backfill_tags(FIRST, last, "deepseek"))
    assert result.success
    with read_warehouse() as conn:
        flagged = conn.execute("SELECT date, list(signal ORDER BY signal) FROM fct_model_changes WHERE flagged"
                               " GROUP BY date ORDER BY date").fetchall()
        alerts = conn.execute("SELECT DISTINCT date FROM visibility_alerts WHERE kind = 'model_change'").fetchall()
        labelled = conn.execute("SELECT DISTINCT date FROM visibility_alerts WHERE model_changed").fetchall()
        canaries = conn.execute("SELECT count(*) FROM raw_ai_responses WHERE category = 'canary'").fetchone()[0]
        in_metrics = conn.execute("SELECT count(*) FROM stg_samples WHERE category = 'canary'").fetchone()[0]
    print(flagged)
    assert [day for day, _ in flagged] == [SWITCH_DAY]
    assert {"model", "fingerprint"} <= set(flagged[0][1])
    assert alerts == labelled == [(SWITCH_DAY,)]
    assert canaries == DAYS * 6 * 2 and in_metrics == 0  # asked every night, never in the brand metrics
