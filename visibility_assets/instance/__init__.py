"""The Dagster instance the product uses when the user has not set one up."""

import os
import shutil
from pathlib import Path

from dagster import DagsterInstance

from ..paths import dagster_home

DEFAULT_INSTANCE_YAML = Path(__file__).parent / "dagster.yaml"


def ensure_dagster_home() -> Path:
    """Point DAGSTER_HOME at the data directory's dagster_home unless the user chose one."""
    home = dagster_home()
    home.mkdir(parents=True, exist_ok=True)
    if not (home / "dagster.yaml").exists():
        shutil.copy(DEFAULT_INSTANCE_YAML, home / "dagster.yaml")
    os.environ["DAGSTER_HOME"] = str(home)
    return home


def get_instance() -> DagsterInstance:
    ensure_dagster_home()
    return DagsterInstance.get()
