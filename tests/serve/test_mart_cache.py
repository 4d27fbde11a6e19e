"""The workspace reads the small marts from a copy in memory of the snapshot it reads, once the
copy is made: the same rows as the lake's at that snapshot, never another snapshot's."""

import pytest

from visibility_assets.serve import mart_cache
from visibility_assets.serve.reader import WorkspaceReader
from visibility_assets.warehouse.lake import LakeSettings, write_with_retry

COPY_READ = ("SELECT sql FROM duckdb_views() WHERE temporary AND view_name = 'mention_metrics'")


def _lake(tmp_path) -> LakeSettings:
    settings = LakeSettings.from_env(tmp_path)
    write_with_retry(settings, lambda conn: conn.execute("CREATE TABLE mention_metrics (v INTEGER)"))
    _add_row(settings, 1)
    return settings


def _add_row(settings: LakeSettings, value: int) -> None:
    write_with_retry(settings, lambda conn: conn.execute("INSERT INTO mention_metrics VALUES ($v)", {"v": value}))


def _reads_copy(conn) -> bool:
    row = conn.execute(COPY_READ).fetchone()
    return row is not None and "memory." in row[0]


def test_the_second_request_reads_the_copy_of_the_snapshot_the_first_read_from_the_lake(tmp_path):
    reader = WorkspaceReader(_lake(tmp_path), "")
    with reader.cursor() as conn:
        assert not _reads_copy(conn)  # no copy yet: the lake, and one is made in the background
        assert conn.execute("SELECT sum(v) FROM mention_metrics").fetchone()[0] == 1
    reader.marts.wait()
    assert reader.marts.failure is None
    with reader.cursor() as conn:
        assert _reads_copy(conn)
        assert conn.execute("SELECT sum(v) FROM mention_metrics").fetchone()[0] == 1


def test_after_a_night_a_request_reads_the_new_snapshot_never_the_old_copy(tmp_path):
    settings = _lake(tmp_path)
    reader = WorkspaceReader(settings, "")
    reader.marts.copy_now()
    with reader.cursor() as conn:
        assert _reads_copy(conn)
        old = reader.snapshot(conn)
        _add_row(settings, 10)  # a night commits while the page is being built
        assert conn.execute("SELECT sum(v) FROM mention_metrics").fetchone()[0] == 1
    with reader.cursor() as conn:  # the new snapshot has no copy yet: the lake's rows
        assert reader.snapshot(conn) > old
        assert not _reads_copy(conn)
        assert conn.execute("SELECT sum(v) FROM mention_metrics").fetchone()[0] == 11
    reader.marts.wait()
    with reader.cursor() as conn:
        assert _reads_copy(conn)
        assert conn.execute("SELECT sum(v) FROM mention_metrics").fetchone()[0] == 11


def test_a_request_that_began_before_a_copy_was_made_reads_the_lake_to_its_end(tmp_path):
    reader = WorkspaceReader(_lake(tmp_path), "")
    with reader.cursor() as conn:
        reader.marts.copy_now()  # made meanwhile, in a transaction this one does not see
        assert not _reads_copy(conn)
        assert conn.execute("SELECT sum(v) FROM mention_metrics").fetchone()[0] == 1


def test_a_failed_request_leaves_the_next_one_reading_the_copy(tmp_path):
    reader = WorkspaceReader(_lake(tmp_path), "")
    reader.marts.copy_now()
    with pytest.raises(ZeroDivisionError), reader.cursor() as conn:
        assert _reads_copy(conn)
        raise ZeroDivisionError  # a view's own error: the transaction rolls back
    with reader.cursor() as conn:
        assert _reads_copy(conn)
        assert conn.execute("SELECT sum(v) FROM mention_metrics").fetchone()[0] == 1


def test_a_mart_larger_than_the_limit_stays_in_the_lake(tmp_path, monkeypatch):
    settings = _lake(tmp_path)
    _add_row(settings, 2)
    monkeypatch.setattr(mart_cache, "MAX_ROWS", 1)
    reader = WorkspaceReader(settings, "")
    reader.marts.copy_now()
    with reader.cursor() as conn:
        assert not _reads_copy(conn)
        assert conn.execute("SELECT sum(v) FROM mention_metrics").fetchone()[0] == 3


def test_only_the_latest_copies_are_kept(tmp_path):
    settings = _lake(tmp_path)
    reader = WorkspaceReader(settings, "")
    for value in range(mart_cache.KEPT_COPIES + 2):
        _add_row(settings, value)
        reader.marts.copy_now()
    with reader.cursor() as conn:
        copies = conn.execute(mart_cache.COPIES, {"prefix": reader.marts.schema(0)[:-1]}).fetchall()
    assert len(copies) == mart_cache.KEPT_COPIES


def test_a_duckdb_reused_for_another_lake_keeps_no_copy_of_the_first(tmp_path):
    from visibility_assets.warehouse import lake

    first = WorkspaceReader(_lake(tmp_path / "first"), "")
    first.marts.copy_now()
    # More lakes than a process keeps engines for: the first's is retired, then reused.
    for index in range(lake.MAX_ENGINES * 2 + 1):
        reader = WorkspaceReader(_lake(tmp_path / f"lake{index}"), "")
        with reader.cursor() as conn:
            left = conn.execute("SELECT schema_name FROM duckdb_schemas() WHERE database_name = 'memory'"
                                " AND starts_with(schema_name, 'marts_')").fetchall()
            assert left == [], index
