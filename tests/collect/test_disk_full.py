"""A full disk is one clear error naming what was being written and where, with no traceback, and
tears nothing: once there is room again, the same night gives every request key exactly once.

The data directory is put on a small tmpfs (root only: the machine's CI runs as root)."""

import json
import os
import socket
import subprocess
import sys

import pytest

from tests.conftest import write_config

pytestmark = pytest.mark.system
DAY = "2026-11-05"


@pytest.fixture
def small_disk(tmp_path):
    if os.geteuid() != 0:
        pytest.skip("mounting a tmpfs needs root")
    mount_point = tmp_path / "disk"
    mount_point.mkdir()
    mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=6m", "tmpfs", str(mount_point)],
                             capture_output=True, text=True)
    if mounted.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {mounted.stderr.strip()}")
    try:
        yield mount_point
    finally:
        subprocess.run(["umount", "-l", str(mount_point)], check=False)


@pytest.mark.long
def test_a_full_disk_is_said_once_and_the_night_resumes_exactly_once_with_room(tmp_path, small_disk):
    with socket.socket() as free:  # the demo starts its own simulators, on the config's port
        free.bind(("127.0.0.1", 0))
        port = free.getsockname()[1]
    config = write_config(tmp_path / "config", port, questions=12, rounds=2)
    home = small_disk / "visibility"
    env = {**os.environ, "VISIBILITY_HOME": str(home)}
    env.pop("VISIBILITY_CONFIG_DIR", None)
    env.pop("DAGSTER_HOME", None)

    def visibility(*args: str) -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, "-m", "visibility_assets.cli", "--config-dir", str(config), *args],
                              capture_output=True, text=True, env=env, timeout=600)

    full = visibility("demo", "--date", DAY)
    said = full.stdout + full.stderr
    assert full.returncode == 1, said
    assert "the disk is full" in said and str(home) in said and "MB free of" in said, said
    assert "FAILED (downstream fault)" in said  # the disk's, not the platform's
    assert "Traceback" not in said and "sqlalchemy" not in said.lower() and "disk I/O error" not in said, said

    subprocess.run(["mount", "-o", "remount,size=400m", str(small_disk)], check=True)
    again = visibility("demo", "--date", DAY)
    assert again.returncode == 0, again.stdout + again.stderr
    counts = json.loads(visibility("sql", "SELECT (SELECT count(*) FROM raw_ai_responses) AS raw,"
                                          " (SELECT count(DISTINCT request_key) FROM raw_ai_responses) AS raw_keys,"
                                          " (SELECT count(*) FROM cleaned_samples) AS cleaned,"
                                          " (SELECT count(DISTINCT request_key) FROM cleaned_samples) AS cleaned_keys,"
                                          " (SELECT count(*) FROM collection_requests) AS planned",
                                   "--format", "json").stdout)[0]
    assert counts["raw"] == counts["raw_keys"] == counts["cleaned"] == counts["cleaned_keys"] == counts["planned"]
    assert counts["planned"] > 0
    # An answer received before the disk filled was kept (the log of requests in flight): no
    # request was answered twice, once by each run.
    answered_twice = json.loads(visibility("sql", "SELECT count(*) AS n FROM (SELECT request_key FROM http_attempts"
                                                  " WHERE error_class IS NULL AND http_status = 200 GROUP BY 1"
                                                  " HAVING count(*) > 1)", "--format", "json").stdout)[0]["n"]
    assert answered_twice == 0
