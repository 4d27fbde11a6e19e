"""The warehouse under load as users meet it: six platform partitions materialize at once, in six
processes, while another process holds the warehouse open and queries it in a loop."""

import json
import os
import subprocess
import sys

import pytest

from tests.pipeline import read_warehouse, write_warehouse
from visibility_assets.config import load_config
from visibility_assets.runs import materialize_partitions

pytestmark = pytest.mark.slow  # servers, processes or Dagster runs: the CI tier

DAY = "2026-11-06"


def test_six_partitions_written_at_once_under_an_open_reader_lose_nothing_and_tear_nothing(
        visibility_home, config_dir, tmp_path):
    config = load_config()
    answers = 12 * 2  # the config_dir fixture: 12 questions, 2 rounds
    keys = [(DAY, name) for name in config.platform_names]
    stop = tmp_path / "stop-reading"
    write_warehouse(lambda conn: None)  # the warehouse exists; the user opens it, no table yet
    reader = subprocess.Popen([sys.executable, "-m", "tests.workers.lake_reader", str(stop), DAY, str(answers)],
                              stdout=subprocess.PIPE, text=True, env=dict(os.environ))
    try:
        # Collected, cleaned and measured at once (replacing a partition under a reader is the
        # same transaction shape; test_raw_responses and test_metrics rematerialize partitions).
        first = materialize_partitions(config_dir, keys, parallel=6)
    finally:
        stop.touch()
        out, _ = reader.communicate(timeout=60)
    figures = json.loads(out.strip().splitlines()[-1])
    print("reader:", figures)  # the closing note quotes these

    failed = [(r.platform, r.error) for r in first if not r.success]
    assert failed == []  # no lock error, no conflict left unresolved
    assert figures["errors"] == 0, figures["first_error"]
    assert figures["torn"] == 0
    assert figures["reads"] > 0
    with read_warehouse() as conn:
        per_partition = conn.execute("SELECT platform, count(*), count(DISTINCT request_key) FROM raw_ai_responses"
                                     " GROUP BY 1").fetchall()
    assert sorted(per_partition) == sorted((name, answers, answers) for name in config.platform_names)
