"""A year of nights stays cheap to read: every lake table with a date keeps each month in files
of its own, so that the nightly merge never joins months and a night's statements, bounded by
the days of their run, open only the files of those days' month."""

from datetime import date, timedelta

import pyarrow as pa
import pytest

from tests.services import scratch_database

from visibility_assets.core.partitions import Partition
from visibility_assets.measure.project import load_project
from visibility_assets.measure.runner import materialize_models
from visibility_assets.warehouse.db import IN_RUN_PARTITIONS, ensure_table, fill_run_partitions, insert_batch
from visibility_assets.warehouse.lake import LakeSettings, reading, write_with_retry
from visibility_assets.warehouse.maintenance import maintain
from visibility_assets.warehouse.resource import WarehouseResource
from visibility_assets.warehouse.schema import Table, required

DAILY = Table("daily_marks", (required("date", pa.date32()), required("platform", pa.string()),
                              required("mark", pa.int64())))
NIGHTS = [date(2026, 10, 29) + timedelta(days=offset) for offset in range(6)]  # three in October, three in November


def _partition_transforms(conn, table: str) -> list[str]:
    return [transform for (transform,) in conn.execute(
        "SELECT c.transform FROM __ducklake_metadata_lake.ducklake_partition_column AS c"
        " JOIN __ducklake_metadata_lake.ducklake_partition_info AS p USING (partition_id, table_id)"
        " JOIN __ducklake_metadata_lake.ducklake_table AS t USING (table_id)"
        " WHERE t.table_name = ? AND p.end_snapshot IS NULL AND t.end_snapshot IS NULL"
        " ORDER BY c.partition_key_index", [table]).fetchall()]


def _write_night(settings: LakeSettings, night: date) -> None:
    def work(conn):
        ensure_table(conn, DAILY)
        insert_batch(conn, DAILY, DAILY.batch([(night, platform, night.day) for platform in ("kimi", "qwen")]))
    write_with_retry(settings, work)


def _six_nights_merged(tmp_path) -> LakeSettings:
    """NIGHTS written a commit each, then the nightly maintenance."""
    settings = LakeSettings.from_env(tmp_path)
    for night in NIGHTS:
        _write_night(settings, night)
    maintain(settings, NIGHTS[-1] + timedelta(days=1))
    return settings


def _files_read(conn, sql: str) -> int:
    plan = conn.execute("EXPLAIN ANALYZE " + sql).fetchall()[0][1]
    return sum(int(line.split(":")[1].strip(" │")) for line in plan.splitlines() if "Total Files Read" in line)


def test_a_table_with_a_date_keeps_each_month_in_files_of_its_own_through_the_nightly_merge(tmp_path):
    settings = _six_nights_merged(tmp_path)
    with reading(settings) as conn:
        assert _partition_transforms(conn, DAILY.name) == ["year", "month"]
        files = conn.execute("SELECT count(*) FROM __ducklake_metadata_lake.ducklake_data_file AS f"
                             " JOIN __ducklake_metadata_lake.ducklake_table AS t USING (table_id)"
                             " WHERE t.table_name = ? AND f.end_snapshot IS NULL", [DAILY.name]).fetchone()[0]
        assert files == 2  # six nights' files merged into one per month, not one for all
        assert conn.execute("SELECT count(*) FROM daily_marks").fetchone()[0] == 12


def test_a_statement_on_the_runs_partitions_opens_only_the_files_of_their_month(tmp_path):
    settings = _six_nights_merged(tmp_path)
    with reading(settings) as conn:
        fill_run_partitions(conn, [Partition(NIGHTS[-1], "kimi")])
        sql = "SELECT mark FROM daily_marks WHERE " + IN_RUN_PARTITIONS
        assert conn.execute(sql).fetchall() == [(NIGHTS[-1].day,)]
        assert _files_read(conn, sql) == 1
        assert _files_read(conn, "SELECT mark FROM daily_marks") == 2


def test_a_table_an_earlier_version_made_unpartitioned_is_partitioned_when_next_ensured(tmp_path):
    settings = LakeSettings.from_env(tmp_path)
    write_with_retry(settings, lambda conn: conn.execute(DAILY.ddl()))  # as the versions before this one made it
    with reading(settings) as conn:
        assert _partition_transforms(conn, DAILY.name) == []
    _write_night(settings, NIGHTS[0])
    _write_night(settings, NIGHTS[1])  # a second ensure in this process asks nothing more
    with reading(settings) as conn:
        assert _partition_transforms(conn, DAILY.name) == ["year", "month"]
        assert conn.execute("SELECT count(*) FROM __ducklake_metadata_lake.ducklake_partition_info").fetchone()[0] == 1


def test_every_incremental_models_table_is_partitioned_by_month(tmp_path):
    settings = LakeSettings.from_env(tmp_path)
    project = load_project()
    models = [model for model in project.models.values() if model.partitioned]
    warehouse = WarehouseResource.from_settings(settings)
    materialize_models(warehouse, project, models, [Partition(NIGHTS[0], "kimi")], "run-1")
    with reading(settings) as conn:
        for model in models:
            assert _partition_transforms(conn, model.name) == ["year", "month"], model.name


@pytest.mark.system
def test_a_lake_whose_catalog_is_in_postgres_is_partitioned_the_same_way(tmp_path):
    with scratch_database("visibility_partitioned") as database:
        settings = LakeSettings(f"postgres:dbname={database} host=127.0.0.1 user=postgres", str(tmp_path / "data") + "/")
        settings.prepare_local()
        _write_night(settings, NIGHTS[0])
        _write_night(settings, NIGHTS[-1])
        with reading(settings) as conn:
            assert _partition_transforms(conn, DAILY.name) == ["year", "month"]
            assert conn.execute("SELECT count(*) FROM daily_marks").fetchone()[0] == 4
