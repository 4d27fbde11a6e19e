"""The workspace's reads: a request reads one snapshot from its first query to its last, and the
next request reads what was committed since."""

from visibility_assets.serve.reader import WorkspaceReader
from visibility_assets.warehouse.lake import LakeSettings, write_with_retry


def _add_row(settings: LakeSettings, value: int) -> None:
    write_with_retry(settings, lambda conn: conn.execute("INSERT INTO figures VALUES ($v)", {"v": value}))


def test_a_request_reads_one_snapshot_and_the_next_request_reads_the_commits_made_meanwhile(tmp_path):
    settings = LakeSettings.from_env(tmp_path)
    write_with_retry(settings, lambda conn: conn.execute("CREATE TABLE figures (v INTEGER)"))
    _add_row(settings, 1)
    reader = WorkspaceReader(settings, "")
    with reader.cursor() as conn:
        first = conn.execute("SELECT sum(v) FROM figures").fetchone()[0]
        snapshot = reader.snapshot(conn)
        _add_row(settings, 10)  # a night commits while the page is being built
        assert conn.execute("SELECT sum(v) FROM figures").fetchone()[0] == first == 1
        assert reader.snapshot(conn) == snapshot  # the snapshot the page names is the one it read
    with reader.cursor() as conn:  # the next request, on the same kept cursor
        assert conn.execute("SELECT sum(v) FROM figures").fetchone()[0] == 11
        assert reader.snapshot(conn) > snapshot
