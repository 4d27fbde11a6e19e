"""A platform that is down (nothing listens at its address) fails fast and says why, while the
other platforms of the night complete: `visibility demo` with one base_url refusing connections."""

import json
import os
import socket
import subprocess
import sys
import time
from datetime import datetime

import pytest
import yaml

from tests.conftest import write_config

pytestmark = pytest.mark.system
DAY = "2026-11-03"
DOWN = "hunyuan"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.mark.long
def test_a_platform_refusing_connections_fails_within_a_minute_naming_host_port_and_refused(tmp_path):
    config = write_config(tmp_path / "config", _free_port(), questions=5, rounds=1)
    platforms = yaml.safe_load((config / "platforms.yaml").read_text(encoding="utf-8"))
    closed = _free_port()  # nothing listens on 127.0.0.2 (loopback, and no simulator is started there)
    for platform in platforms["platforms"]:
        if platform["name"] == DOWN:
            platform["base_url"] = f"http://127.0.0.2:{closed}/v1"
    (config / "platforms.yaml").write_text(yaml.safe_dump(platforms, allow_unicode=True), encoding="utf-8")
    env = {**os.environ, "VISIBILITY_HOME": str(tmp_path / "home")}
    env.pop("VISIBILITY_CONFIG_DIR", None)
    started = time.monotonic()
    result = subprocess.run([sys.executable, "-m", "visibility_assets.cli", "--config-dir", str(config), "demo",
                             "--date", DAY], capture_output=True, text=True, env=env, timeout=600)
    elapsed = time.monotonic() - started
    assert result.returncode == 1, result.stdout + result.stderr
    summary = [line for line in result.stdout.splitlines() if line.startswith(f"{DAY}  ")]
    down = next(line for line in summary if f"  {DOWN} " in line)
    assert f"127.0.0.2:{closed}" in down and "connection refused" in down and "platform is down" in down
    assert "FAILED (source fault)" in down  # the platform's, not the pipeline's
    assert all(line.endswith("ok") for line in summary if f"  {DOWN} " not in line) and len(summary) == 6
    assert "Traceback" not in result.stdout + result.stderr and "dagster._core" not in down
    assert elapsed < 120, elapsed  # the whole demo: the down platform does not hold the night up

    def sql(query: str) -> list:
        out = subprocess.run([sys.executable, "-m", "visibility_assets.cli", "--config-dir", str(config), "sql",
                              query, "--format", "json"], capture_output=True, text=True, env=env, timeout=120)
        return json.loads(out.stdout)

    (ledger,) = sql(f"SELECT count(*) AS attempts, min(started_at) AS first, max(finished_at) AS last,"
                    f" list(DISTINCT error_class) AS classes FROM journal_attempts WHERE platform = '{DOWN}'")
    assert 0 < ledger["attempts"] < 20 and ledger["classes"] == ["unreachable"], ledger
    first, last = (datetime.fromisoformat(ledger[k]) for k in ("first", "last"))
    assert (last - first).total_seconds() < 60  # the breaker opened at once, not after minutes of retries
    (run,) = sql(f"SELECT * FROM collection_runs WHERE platform = '{DOWN}'")
    assert "connection refused" in json.dumps(run, ensure_ascii=False), run
    assert run["fault_class"] == "source"
    (fault,) = sql("SELECT platform, kind, fault_class, detail FROM fault_events")
    assert (fault["platform"], fault["kind"], fault["fault_class"]) == (DOWN, "run_failed", "source")
    assert "connection refused" in fault["detail"]


@pytest.mark.parametrize(("url", "reason"), [
    ("http://127.0.0.2:{closed}/v1", "connection refused"),
    ("http://no-such-platform.invalid/v1", "name not resolved"),
    ("https://127.0.0.1:{plain}/v1", "TLS failure"),  # TLS spoken to a plain TCP server
])
def test_a_connection_that_cannot_be_made_is_unreachable_with_its_reason(url, reason):
    import asyncio
    import threading

    import httpx

    from visibility_assets.collect.errors import ErrorClass, classify_exception, unreachable_reason

    plain = socket.socket()
    plain.bind(("127.0.0.1", 0))
    plain.listen()

    def answer_in_plain_http() -> None:  # as a plain HTTP server answers a TLS hello, whatever the timing
        connection, _ = plain.accept()
        connection.recv(4096)
        connection.sendall(b"HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
        connection.close()

    threading.Thread(target=answer_in_plain_http, daemon=True).start()
    target = url.format(closed=_free_port(), plain=plain.getsockname()[1])

    async def post():
        async with httpx.AsyncClient(timeout=5) as client:
            await client.post(target, json={})

    with pytest.raises(httpx.ConnectError) as raised:
        asyncio.run(post())
    plain.close()
    assert unreachable_reason(raised.value) == reason
    assert classify_exception(raised.value) is ErrorClass.UNREACHABLE
    assert unreachable_reason(httpx.ReadTimeout("slow")) is None  # a timeout keeps its patience
