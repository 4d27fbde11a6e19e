"""`python -m tests.report.week_lake HOME CONFIG_DIR LAST_DAY DAYS`: DAYS nights of qwen and kimi
up to LAST_DAY written into the lake under HOME, as tests/workspace_lake.py writes them. Run as its
own process by the cost plan's test, so that the test's worker opens no lake of its own (a test
process that opens more than four lakes retires DuckDB engines, the rare crash the lake's notes
describe)."""

from __future__ import annotations

import sys
from datetime import date
from pathlib import Path

from tests.workspace_lake import build_lake
from visibility_assets.config import load_config

PLATFORMS = ("qwen", "kimi")  # a search in the request, and a search that is a tool loop (two requests)

if __name__ == "__main__":
    home, config_dir, last_day, days = sys.argv[1:5]
    build_lake(Path(home), load_config(config_dir), date.fromisoformat(last_day), int(days), PLATFORMS)
