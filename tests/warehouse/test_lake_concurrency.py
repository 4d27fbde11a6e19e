"""The warehouse under load as users meet it: six platform partitions are written at once, in six
processes, each with the transactions of the nightly job's assets (tests/workers/partition_writer.py),
and each is written again, replacing its rows, while another process holds the warehouse open and
queries it in a loop."""

import json
import os
import subprocess
import sys

import pytest

from tests.pipeline import read_warehouse, write_warehouse
from visibility_assets.config import load_config

pytestmark = pytest.mark.system

DAY = "2026-11-06"
PASSES = 2  # written, then replaced: the reader must never see a partition torn or doubled


@pytest.mark.long
def test_six_partitions_written_at_once_twice_under_an_open_reader_lose_nothing_and_tear_nothing(
        visibility_home, config_dir, tmp_path):
    config = load_config()
    answers = 12 * 2  # the config_dir fixture: 12 questions, 2 rounds
    stop = tmp_path / "stop-reading"
    write_warehouse(lambda conn: None)  # the warehouse exists; the user opens it, no table yet
    reader = subprocess.Popen([sys.executable, "-m", "tests.workers.lake_reader", str(stop), DAY, str(answers)],
                              stdout=subprocess.PIPE, text=True, env=dict(os.environ))
    try:
        writers = [subprocess.Popen([sys.executable, "-m", "tests.workers.partition_writer", str(config_dir), DAY,
                                     platform, str(PASSES)], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                    text=True, env=dict(os.environ))
                   for platform in config.platform_names]
        outputs = [writer.communicate(timeout=600) for writer in writers]
    finally:
        stop.touch()
        out, _ = reader.communicate(timeout=60)
    figures = json.loads(out.strip().splitlines()[-1])
    print("reader:", figures)  # the closing note quotes these

    for writer, (stdout, stderr) in zip(writers, outputs):
        assert writer.returncode == 0, stderr[-3000:]
        written = json.loads(stdout.strip().splitlines()[-1])
        # no lock error, no conflict left unresolved, on either pass
        assert [(p["answers"], p["errors"]) for p in written["passes"]] == [([answers], [])] * PASSES, written
        assert all(p["rows"]["fct_mention_metrics"] > 0 for p in written["passes"]), written
    assert figures["errors"] == 0, figures["first_error"]
    assert figures["torn"] == 0
    assert figures["reads"] > 0
    with read_warehouse() as conn:
        per_partition = conn.execute("SELECT platform, count(*), count(DISTINCT request_key) FROM raw_ai_responses"
                                     " GROUP BY 1").fetchall()
        runs = conn.execute("SELECT platform, count(DISTINCT run_id) FROM cleaned_samples GROUP BY 1").fetchall()
    assert sorted(per_partition) == sorted((name, answers, answers) for name in config.platform_names)
    assert sorted(runs) == sorted((name, 1) for name in config.platform_names)  # the second pass replaced the first
