"""The Dagster instance the product uses when the user has not set one up."""

import os
import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from dagster import DagsterInstance

from visibility_assets.core.paths import dagster_home

INSTANCE_YAML = {
    "sqlite": Path(__file__).parent / "dagster.yaml",
    "postgres": Path(__file__).parent / "dagster.postgres.yaml",
}
PG_URL_ENV = "VISIBILITY_PG_URL"
# Dagster records one event per partition of a range run: a 540-partition backfill of the four
# incremental SQL models writes ~2,200 "planned" and ~2,200 materialization events, which is
# most of its time. Two switches, environment variables that Dagster itself reads, cut that.
EVENT_BATCH_SIZE_ENV = "DAGSTER_EVENT_BATCH_SIZE"
PLANNED_SUBSET_ENV = "DAGSTER_EMIT_PARTITION_SUBSET_IN_PLANNED_EVENTS"
EVENT_BATCH_SIZE = "1000"
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
    """The instance for runs a command executes in its own process (they write their own events)."""
    ensure_dagster_home(kind)
    batch_event_writes()
    return DagsterInstance.get()


def batch_event_writes() -> None:
    """Have run workers write a step's asset events as batches of up to EVENT_BATCH_SIZE: on
    PostgreSQL storage one multi-row insert instead of one transaction per partition (a
    SQLite storage still writes them one by one (figures: docs/architecture.md, "Performance").
    Dagster falls back to single writes if a batch fails. A value the user set is kept."""
    os.environ.setdefault(EVENT_BATCH_SIZE_ENV, EVENT_BATCH_SIZE)


@contextmanager
def planned_events_as_subsets() -> Iterator[None]:
    """Runs created inside record one "planned" event per asset holding the partition subset,
    not one per partition. Dagster's trade-off:
    if such a run fails, its partitions are not marked failed in the UI (the run is). Used for
    the range runs this package creates itself; see docs/deployment.md for the daemon and webserver."""
    previous = os.environ.get(PLANNED_SUBSET_ENV)
    os.environ[PLANNED_SUBSET_ENV] = "true"
    try:
        yield
    finally:
        if previous is None:
            os.environ.pop(PLANNED_SUBSET_ENV, None)
        else:
            os.environ[PLANNED_SUBSET_ENV] = previous
