"""Where the product keeps its data: one directory, `./.visibility/` or `$VISIBILITY_HOME`."""

from __future__ import annotations

import os
from pathlib import Path

HOME_ENV = "VISIBILITY_HOME"


def data_dir() -> Path:
    return Path(os.environ.get(HOME_ENV) or ".visibility").expanduser().resolve()


def warehouse_path() -> Path:
    return data_dir() / "warehouse.duckdb"


def journal_dir() -> Path:
    """Per-partition collection journals (see collect/journal.py)."""
    return data_dir() / "journal"


def reports_dir() -> Path:
    return data_dir() / "reports"


def dagster_home() -> Path:
    return Path(os.environ.get("DAGSTER_HOME") or data_dir() / "dagster_home").expanduser().resolve()
