"""A partition's old rows are deleted only from the tables whose files may hold them
(tables_holding): a night's new partition skips the deletes, a re-run still replaces its rows."""

from __future__ import annotations

from datetime import date, timedelta

import duckdb
import pyarrow as pa
import pytest

from tests.services import scratch_database
from visibility_assets.core.partitions import Partition
from visibility_assets.warehouse.db import ensure_table, fill_run_partitions, insert_batch, tables_holding
from visibility_assets.warehouse.lake import LakeSettings, reading, write_with_retry
from visibility_assets.warehouse.maintenance import maintain
from visibility_assets.warehouse.resource import WarehouseResource
from visibility_assets.warehouse.schema import Table, required
from visibility_assets.warehouse.tables import SAMPLE_QUARANTINE

MARKS = Table("daily_marks", (required("date", pa.date32()), required("platform", pa.string()),
                              required("mark", pa.int64())))
UNDATED = Table("undated_marks", (required("mark", pa.int64()),))
NIGHT = date(2026, 11, 3)


def _write(settings: LakeSettings, *partitions: Partition, mark: int = 1) -> None:
    def work(conn):
        ensure_table(conn, MARKS)
        insert_batch(conn, MARKS, MARKS.batch([(day, platform, mark) for day, platform in partitions]))
    write_with_retry(settings, work)


def _holding(settings: LakeSettings, *partitions: Partition, tables=(MARKS.name,)) -> set[str]:
    def work(conn):
        fill_run_partitions(conn, partitions)
        return tables_holding(conn, list(tables))
    return write_with_retry(settings, work)[0]


def test_a_platforms_new_partition_is_held_by_no_file_of_the_others_written_that_night(tmp_path):
    settings = LakeSettings.from_env(tmp_path)
    _write(settings, Partition(NIGHT, "deepseek"))
    _write(settings, Partition(NIGHT, "qwen"))
    assert _holding(settings, Partition(NIGHT, "kimi")) == set()
    assert _holding(settings, Partition(NIGHT, "qwen")) == {MARKS.name}
    assert _holding(settings, Partition(NIGHT + timedelta(days=1), "qwen")) == set()
    assert _holding(settings, Partition(NIGHT, "kimi"), Partition(NIGHT, "deepseek")) == {MARKS.name}


def test_a_merged_file_holds_every_platform_between_its_first_and_last(tmp_path):
    settings = LakeSettings.from_env(tmp_path)
    _write(settings, Partition(NIGHT, "deepseek"))
    _write(settings, Partition(NIGHT, "qwen"))
    maintain(settings, NIGHT + timedelta(days=1))  # the night's files merged into one
    assert _holding(settings, Partition(NIGHT, "kimi")) == {MARKS.name}  # its statistics cannot rule it out
    assert _holding(settings, Partition(NIGHT, "zhipu")) == set()


def test_a_table_without_date_and_platform_or_missing_from_the_lake_is_answered_safely(tmp_path):
    settings = LakeSettings.from_env(tmp_path)
    write_with_retry(settings, lambda conn: ensure_table(conn, UNDATED))
    _write(settings, Partition(NIGHT, "qwen"))
    tables = (MARKS.name, UNDATED.name, "never_written")
    assert _holding(settings, Partition(NIGHT, "kimi"), tables=tables) == {UNDATED.name}


def test_a_plain_duckdb_deletes_from_every_table():
    conn = duckdb.connect()
    fill_run_partitions(conn, [Partition(NIGHT, "kimi")])
    assert tables_holding(conn, ["a", "b"]) == {"a", "b"}


def test_replacing_a_partition_twice_keeps_one_copy_and_leaves_the_other_platforms_alone(tmp_path):
    """The cleaned tables' path: the first write skips the delete, the second replaces its rows."""
    warehouse = WarehouseResource.from_settings(LakeSettings.from_env(tmp_path))
    for platform, count in (("qwen", 3), ("kimi", 2), ("kimi", 4)):
        rows = SAMPLE_QUARANTINE.from_dicts([{"request_key": f"{platform}-{i}", "date": NIGHT, "platform": platform}
                                             for i in range(count)])
        warehouse.replace_partitions({SAMPLE_QUARANTINE.name: rows}, [Partition(NIGHT, platform)])
    with reading(warehouse.settings()) as conn:
        counts = dict(conn.execute("SELECT platform, count(*) FROM sample_quarantine GROUP BY 1").fetchall())
    assert counts == {"qwen": 3, "kimi": 4}


@pytest.mark.system
def test_a_lake_whose_catalog_is_in_postgres_answers_the_same(tmp_path):
    with scratch_database("visibility_holding") as database:
        settings = LakeSettings(f"postgres:dbname={database} host=127.0.0.1 user=postgres", str(tmp_path / "data") + "/")
        settings.prepare_local()
        _write(settings, Partition(NIGHT, "deepseek"))
        assert _holding(settings, Partition(NIGHT, "kimi")) == set()
        assert _holding(settings, Partition(NIGHT, "deepseek")) == {MARKS.name}
