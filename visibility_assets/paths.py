"""Where the product keeps its data: one directory, `./.visibility/` or `$VISIBILITY_HOME`.

Read when a code location or a command starts; assets, schedules and sensors get the paths
through the resources built from it (defs/resources.py).
"""

from __future__ import annotations

import os
from pathlib import Path

from .warehouse.lake import LakeSettings

HOME_ENV = "VISIBILITY_HOME"


def data_dir() -> Path:
    return Path(os.environ.get(HOME_ENV) or ".visibility").expanduser().resolve()


def lake_settings() -> LakeSettings:
    """Where the warehouse is: VISIBILITY_WAREHOUSE, or a lake under the data directory."""
    return LakeSettings.from_env(data_dir())


def dagster_home() -> Path:
    return Path(os.environ.get("DAGSTER_HOME") or data_dir() / "dagster_home").expanduser().resolve()
