"""A process's DuckDBs: writers share one per lake, readers of the present another; an engine
retired for a lake the process no longer uses serves the next lake, its extensions loaded."""

from visibility_assets.warehouse import lake
from visibility_assets.warehouse.lake import LakeSettings, open_reader, reading, write_with_retry


def _write(settings: LakeSettings, value: int) -> None:
    write_with_retry(settings, lambda conn: conn.execute("CREATE TABLE IF NOT EXISTS mark AS SELECT $v AS v",
                                                         {"v": value}))


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


def test_a_reader_of_the_present_sees_what_is_committed_after_it_opened(tmp_path):
    settings = LakeSettings.from_env(tmp_path)
    _write(settings, 1)
    conn = open_reader(settings)
    try:
        write_with_retry(settings, lambda c: c.execute("INSERT INTO mark VALUES (2)"))
        assert conn.execute("SELECT sum(v) FROM mark").fetchall() == [(3,)]
    finally:
        conn.close()
