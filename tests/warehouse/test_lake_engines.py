"""A process's DuckDBs: writers share one per lake, readers of the present another; an engine
retired for a lake the process no longer uses serves the next lake, its extensions loaded."""

import pytest

from visibility_assets.warehouse import lake
from visibility_assets.warehouse.lake import LakeSettings, open_reader, reading, write_with_retry


def _write(settings: LakeSettings, value: int) -> None:
    write_with_retry(settings, lambda conn: conn.execute("CREATE TABLE IF NOT EXISTS mark AS SELECT $v AS v",
                                                         {"v": value}))


@pytest.mark.slow  # over a second by design
def test_each_of_many_lakes_a_process_opens_reads_its_own_tables(tmp_path):
    lakes = [LakeSettings.from_env(tmp_path / f"home-{i}") for i in range(2 * lake.MAX_ENGINES)]
    for value, settings in enumerate(lakes):
        _write(settings, value)
        with reading(settings) as conn:
            assert conn.execute("SELECT v FROM mark").fetchall() == [(value,)]
    assert lake._SPARE  # engines of lakes no longer used were kept, not closed
    for value, settings in enumerate(lakes):  # each again, most on a reused engine
        with reading(settings) as conn:
            assert conn.execute("SELECT v FROM mark").fetchall() == [(value,)]
            assert [t for (t,) in conn.execute("SELECT table_name FROM information_schema.tables"
                                               " WHERE table_catalog = 'lake'").fetchall()] == ["mark"]


@pytest.mark.slow  # over a second by design
def test_a_cursor_kept_open_while_the_process_opens_many_lakes_still_reads_its_own(tmp_path):
    """Its engine is retired while the cursor is open (a workspace's thread keeps one): the engine
    is forgotten, not handed to the next lake with the first one detached under the cursor."""
    lakes = [LakeSettings.from_env(tmp_path / f"home-{i}") for i in range(lake.MAX_ENGINES + 2)]
    _write(lakes[0], 100)
    kept = open_reader(lakes[0])
    try:
        for value, settings in enumerate(lakes[1:], start=1):
            _write(settings, value)
        assert (lakes[0], True) not in lake._ENGINES  # retired while the cursor was open
        assert kept.execute("SELECT v FROM mark").fetchall() == [(100,)]
    finally:
        kept.close()


def test_a_reader_of_the_present_sees_what_is_committed_after_it_opened(tmp_path):
    settings = LakeSettings.from_env(tmp_path)
    _write(settings, 1)
    conn = open_reader(settings)
    try:
        write_with_retry(settings, lambda c: c.execute("INSERT INTO mark VALUES (2)"))
        assert conn.execute("SELECT sum(v) FROM mark").fetchall() == [(3,)]
    finally:
        conn.close()


def test_a_lake_moved_with_its_data_folder_reads_there_and_a_catalog_kept_elsewhere_needs_to_be_told(
        tmp_path, monkeypatch):
    import shutil

    import pytest
    _write(LakeSettings.from_env(tmp_path / "before"), 7)
    shutil.copytree(tmp_path / "before", tmp_path / "after")
    shutil.rmtree(tmp_path / "before")
    with reading(LakeSettings.from_env(tmp_path / "after")) as conn:  # the data directory's layout
        assert conn.execute("SELECT v FROM mark").fetchall() == [(7,)]
    # A catalog whose data lies elsewhere refuses a data path it does not remember ...
    catalog = "sqlite:" + str(tmp_path / "after" / "warehouse" / "catalog.sqlite")
    (tmp_path / "data-elsewhere").mkdir()
    shutil.copytree(tmp_path / "after" / "warehouse" / "data", tmp_path / "data-elsewhere" / "data")
    monkeypatch.setenv(lake.CATALOG_ENV, catalog)
    monkeypatch.setenv(lake.DATA_ENV, str(tmp_path / "data-elsewhere" / "data") + "/")
    with pytest.raises(lake.WarehouseSettingError, match="keeps its data at .*set VISIBILITY_WAREHOUSE_DATA_MOVED=true"):
        with reading(LakeSettings.from_env(tmp_path)) as conn:
            conn.execute("SELECT v FROM mark").fetchall()
    # ... until told that the data moved.
    monkeypatch.setenv(lake.DATA_MOVED_ENV, "true")
    with reading(LakeSettings.from_env(tmp_path)) as conn:
        assert conn.execute("SELECT v FROM mark").fetchall() == [(7,)]


@pytest.mark.parametrize("statement", ["LOAD httpfs", "LOAD '{httpfs_file}'", "SET allow_unsigned_extensions = false"])
def test_a_sealed_reader_loads_nothing_more_whatever_its_query_says(tmp_path, statement):
    """Past the SQL guard of `visibility sql` (tested there), DuckDB itself refuses: the lake's
    DuckDBs skip the signature re-hash of the pinned extensions, and only a sealed reader runs
    typed SQL, with external access off and its settings locked."""
    import duckdb

    from pathlib import Path

    (httpfs_file,) = Path(lake.extension_directory()).rglob("httpfs.duckdb_extension")  # a pinned file
    settings = LakeSettings.from_env(tmp_path)
    _write(settings, 1)
    conn = lake.open_sealed_reader(settings)
    try:
        with pytest.raises(duckdb.Error, match="disabled through configuration|configuration has been locked"):
            conn.execute(statement.format(httpfs_file=httpfs_file))
        assert conn.execute("SELECT v FROM mark").fetchall() == [(1,)]
    finally:
        conn.close()


def test_a_process_told_its_share_of_the_cores_opens_its_duckdbs_with_that_many_threads(tmp_path, monkeypatch):
    from visibility_assets.runs import worker_threads

    # Six runs side by side on this machine share its cores; one run alone has them all.
    cores = lake.os.cpu_count() or 1
    assert worker_threads(parallel=6, runs=6) == {lake.THREADS_ENV: str(max(1, cores // 6))}
    assert worker_threads(parallel=6, runs=1) == {lake.THREADS_ENV: str(cores)}
    monkeypatch.setenv(lake.THREADS_ENV, "1")
    settings = LakeSettings.from_env(tmp_path / "home")
    _write(settings, 1)
    lake.discard_engine(settings)  # this test's engines, opened afresh with the setting
    with reading(settings) as conn:
        assert conn.execute("SELECT current_setting('threads')").fetchone()[0] == 1
    assert write_with_retry(settings, lambda conn: conn.execute("SELECT current_setting('threads')").fetchone()[0],
                            snapshot=False)[0] == 1


@pytest.mark.parametrize("value", ["0", "two", "-1"])
def test_a_thread_count_that_is_not_a_whole_number_is_refused_naming_the_setting(tmp_path, monkeypatch, value):
    monkeypatch.setenv(lake.THREADS_ENV, value)
    with pytest.raises(lake.WarehouseSettingError, match=f"{lake.THREADS_ENV}='{value}'"):
        lake.threads_setting()
