"""An API key that a server quotes back is found nowhere: not in the warehouse, the journals,
Dagster's storage, the compute logs, or the output of the run."""

import json
import subprocess
import sys

import httpx
import pytest
from dagster import RetryPolicy, materialize

from visibility_assets.collect.resource import CollectorResource
from visibility_assets.core.partitions import partition_key
from visibility_assets.core.secrets import SecretScrubber
from visibility_assets.operate.instance import get_instance
from visibility_assets.tools.simulator.behaviour import PlatformBehaviour, SimulatorSettings
from visibility_assets.tools.simulator.server import SimulatorServer

from tests.conftest import write_config
from tests.pipeline import raw_asset, read_warehouse, resources

KEY = "sk-echoQ7f3a9c2e41b8d6f0Zx"
KEY_CORE = "Q7f3a9c2e"  # any piece of the key long enough to matter
DAY = "2026-11-06"


def test_scrubber_masks_the_configured_keys_and_anything_shaped_like_a_credential():
    scrub = SecretScrubber(["my-own-gateway-token-123", None, ""])
    assert scrub("upstream said: my-own-gateway-token-123 is invalid") == "upstream said: *** is invalid"
    assert scrub("Authorization: Bearer abcdefgh12345678") == "Authorization: Bearer ***"
    assert scrub('{"error": "Incorrect API key provided: sk-proj-AbC123dEf456gHi"}') == \
        '{"error": "Incorrect API key provided: ***"}'
    assert scrub("阿里云的 sk 系列和 task-based 定价") == "阿里云的 sk 系列和 task-based 定价"
    assert scrub(None) is None


@pytest.mark.system
def test_a_key_echoed_by_the_server_is_stored_and_printed_nowhere(visibility_home, tmp_path, monkeypatch, capfd):
    monkeypatch.setenv("SIM_ECHO_KEY", KEY)
    flaky = PlatformBehaviour(latency_s=(0.001, 0.01), api_key=KEY, echo_credentials=True, server_error_rate=0.4)
    down = PlatformBehaviour(latency_s=(0.001, 0.01), api_key=KEY, echo_credentials=True, server_error_rate=1.0)
    settings = SimulatorSettings(seed=3, default=flaky, platforms={"qwen": down})
    with SimulatorServer(settings) as server:
        config_dir = write_config(tmp_path / "config", server.port, questions=6, api_key_env="SIM_ECHO_KEY")
        monkeypatch.setenv("VISIBILITY_CONFIG_DIR", str(config_dir))
        # deepseek succeeds after retries of echoing 5xx, in a worker process as the demo runs it;
        completed = _run_partition(config_dir, "deepseek")
        # qwen fails (breaker), its step failure quoting the last error, in this process.
        failed = materialize([raw_asset(RetryPolicy(max_retries=0))], partition_key=partition_key(DAY, "qwen"),
                             instance=get_instance(), raise_on_error=False,
                             resources={**resources(), "collector": CollectorResource(base_delay_s=0.01, max_delay_s=0.05)})
        received = httpx.get(f"{server.url}/_stats").json()
    assert not failed.success
    error = failed.get_step_failure_events()[0].event_specific_data.error
    assert "authorization=Bearer ***" in str(error.to_string())
    output = capfd.readouterr()
    for text in (completed.stdout, completed.stderr, output.out, output.err):
        assert KEY_CORE not in text
    assert json.loads(completed.stdout.strip().splitlines()[-1])["success"]
    assert received["deepseek"]["status"].get("500", 0) + received["deepseek"]["status"].get("502", 0) \
        + received["deepseek"]["status"].get("503", 0) > 0  # the server did echo the key

    with read_warehouse() as conn:
        tables = [t for (t,) in conn.execute("SELECT table_name FROM information_schema.tables"
                                             " WHERE table_catalog = 'lake'").fetchall()]
        assert {"http_attempts", "collection_requests", "journal_attempts"} <= set(tables)
        for table in tables:
            dump = conn.execute(f'SELECT * FROM "{table}"').fetchall()  # noqa: S608 - test introspection
            assert KEY_CORE not in repr(dump), table
        assert conn.execute("SELECT count(*) FROM http_attempts WHERE error_message LIKE '%authorization=Bearer ***%'"
                            ).fetchone()[0] > 0  # the echoed errors are kept, masked
    files = [p for p in visibility_home.rglob("*") if p.is_file()]
    assert any("compute_logs" in str(p) or p.suffix in (".out", ".err") for p in files)
    for path in files:  # Dagster's SQLite storage, compute logs, journals, the lake's catalog
        assert KEY_CORE.encode() not in path.read_bytes(), path


def _run_partition(config_dir, platform):
    """One partition in a worker process, as `visibility demo` runs it."""
    quick = {"resources": {"collector": {"config": {"base_delay_s": 0.01, "max_delay_s": 0.05}}}}
    return subprocess.run([sys.executable, "-m", "visibility_assets.run_worker", DAY, platform],
                          input=json.dumps({"config_dir": str(config_dir), "run_config": quick}),
                          capture_output=True, text=True, timeout=300)
