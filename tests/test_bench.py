"""`visibility bench ...` print one JSON object as the last stdout line."""

import json
import subprocess
import sys


def _bench(*args) -> dict:
    result = subprocess.run([sys.executable, "-m", "visibility_assets.cli", "bench", *args],
                            capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr[-2000:]
    return json.loads(result.stdout.strip().splitlines()[-1])


def test_bench_collect_reports_rate_duplicates_and_success():
    figures = _bench("collect", "--platforms", "2", "--requests", "120", "--rps", "40",
                     "--fault-rate", "0.1", "--timeout", "0.5")
    for key in ("requests", "succeeded", "failed", "duplicates", "wall_s", "permitted_rps", "achieved_rps",
                "rate_ratio", "http_429", "retries"):
        assert key in figures
    assert figures["requests"] == figures["succeeded"] == figures["stored"] == 120
    assert figures["duplicates"] == 0
    assert figures["permitted_rps"] == 80
    assert 0 < figures["rate_ratio"] <= 1.05
