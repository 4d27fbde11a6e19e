"""The model-change canary over two simulated weeks: one platform switches its model on day 10."""

from datetime import date, timedelta

import pytest
import yaml
from dagster import DagsterInstance

from tests.pipeline import pipeline, read_warehouse
from visibility_assets.config import EXAMPLE_CONFIG_DIR
from visibility_assets.operate.automation import backfill_tags
from visibility_assets.partition_run import run_job
from visibility_assets.tools.simulator.behaviour import PlatformBehaviour, SimulatorSettings
from visibility_assets.tools.simulator.transport import IN_PROCESS_URL

from tests.conftest import FAST, in_process, write_config

pytestmark = pytest.mark.dagster  # a 14-day range run against the simulated platforms in process

# Nine days before the switch: a full trailing week of baseline, and days without one (no flag).
FIRST, DAYS, SWITCH_AFTER = date(2026, 10, 1), 14, 9
SWITCH_DAY = FIRST + timedelta(days=SWITCH_AFTER)


@pytest.fixture
def switching_simulator():
    switch = PlatformBehaviour(latency_s=FAST.latency_s, model_switch=(SWITCH_DAY.isoformat(), "deepseek-v9"))
    with in_process(SimulatorSettings(seed=3, default=FAST, platforms={"deepseek": switch})) as simulated:
        yield simulated


@pytest.fixture
def canary_config(tmp_path, switching_simulator, monkeypatch):
    """DeepSeek alone, three questions and the shipped canary prompts, two rounds a night."""
    directory = write_config(tmp_path / "config", IN_PROCESS_URL, questions=3, rounds=2)
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
    result = run_job(pipeline(), "nightly_platform_job", DagsterInstance.ephemeral(),
                     tags=backfill_tags(FIRST, last, "deepseek"))
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
