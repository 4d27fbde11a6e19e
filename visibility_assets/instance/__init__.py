"""The Dagster instance the product uses when the user has not set one up."""

import os
import shutil
from pathlib import Path

from dagster import DagsterInstance

from ..paths import dagster_home

INSTANCE_YAML = {
    "sqlite": Path(__file__).parent / "dagster.yaml",
    "postgres": Path(__file__).parent / "dagster.postgres.yaml",
}
PG_URL_ENV = "VISIBILITY_PG_URL"
LOCAL_PG_URL = "postgresql+psycopg2://postgres@127.0.0.1:5432/test"


def ensure_dagster_home(kind: str = "sqlite") -> Path:
    """Point DAGSTER_HOME at the data directory's dagster_home unless the user chose one,
    and give it the shipped dagster.yaml of that kind if it has none."""
    home = dagster_home()
    home.mkdir(parents=True, exist_ok=True)
    if not (home / "dagster.yaml").exists():
        shutil.copy(INSTANCE_YAML[kind], home / "dagster.yaml")
    if kind == "postgres":
        os.environ.setdefault(PG_URL_ENV, LOCAL_PG_URL)
    os.environ["DAGSTER_HOME"] = str(home)
    return home


def get_instance(kind: str = "sqlite") -> DagsterInstance:
    ensure_dagster_home(kind)
    return DagsterInstance.get()
