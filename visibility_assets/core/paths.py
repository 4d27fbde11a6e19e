"""Where the product keeps its data: one directory, `./.visibility/` or `$VISIBILITY_HOME`.

Read when a code location or a command starts; assets, schedules and sensors get the paths
through DataDirResource (and the warehouse's own resource, warehouse/resource.py).
"""

from __future__ import annotations

import os
from pathlib import Path

from dagster import ConfigurableResource

HOME_ENV = "VISIBILITY_HOME"


def data_dir() -> Path:
    return Path(os.environ.get(HOME_ENV) or ".visibility").expanduser().resolve()


def dagster_home() -> Path:
    return Path(os.environ.get("DAGSTER_HOME") or data_dir() / "dagster_home").expanduser().resolve()


class DataDirResource(ConfigurableResource):
    """Where the product keeps its files: `./.visibility/` or $VISIBILITY_HOME."""

    path: str

    def reports_dir(self) -> Path:
        return Path(self.path) / "reports"
