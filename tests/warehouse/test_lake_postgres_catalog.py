"""A lake whose catalog is in PostgreSQL, as a scale-out deployment keeps it: the first night
starts on several machines at once, and each of them finds the catalog missing and creates it."""

import multiprocessing
import time

import pytest

from tests.services import scratch_database
from visibility_assets.warehouse.lake import LakeSettings, reading, write_with_retry

pytestmark = pytest.mark.system

PROCESSES = 4


def _first_write(settings: LakeSettings, start_at: float, table: str) -> None:
    time.sleep(max(0.0, start_at - time.time()))  # every process attaches at the same moment
    write_with_retry(settings, lambda conn: conn.execute("CREATE TABLE " + table + " AS SELECT 1 AS v"))


def test_machines_that_open_a_new_postgres_catalog_at_the_same_moment_all_write(tmp_path):
    with scratch_database("visibility_new_catalog") as database:
        settings = LakeSettings(f"postgres:dbname={database} host=127.0.0.1 user=postgres", str(tmp_path / "data") + "/")
        settings.prepare_local()
        context = multiprocessing.get_context("spawn")
        start_at = time.time() + 3.0  # after every process has imported DuckDB
        workers = [context.Process(target=_first_write, args=(settings, start_at, f"machine_{i}"))
                   for i in range(PROCESSES)]
        for worker in workers:
            worker.start()
        for worker in workers:
            worker.join(60)
        assert [worker.exitcode for worker in workers] == [0] * PROCESSES
        with reading(settings) as conn:
            tables = {name for (name,) in conn.execute("SELECT table_name FROM information_schema.tables"
                                                       " WHERE table_catalog = 'lake'").fetchall()}
        assert tables == {f"machine_{i}" for i in range(PROCESSES)}
