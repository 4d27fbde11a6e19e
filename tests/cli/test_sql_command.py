"""`visibility sql`: read-only queries in three formats, time travel, and attach SQL that a plain
DuckDB client can run."""

import json

import duckdb
import pytest

from tests.pipeline import write_warehouse
from visibility_assets.cli.main import main
from visibility_assets.warehouse.lake import lake_settings, write_with_retry


def _sql(capsys, *args) -> tuple[int, str, str]:
    status = main(["sql", *args])
    out, err = capsys.readouterr()
    return status, out, err


@pytest.fixture
def two_snapshots(visibility_home):
    """A table written, then changed: the snapshot of the first write."""
    _, snapshot = write_with_retry(lake_settings(), lambda conn: conn.execute(
        "CREATE TABLE answers_seen AS SELECT 'kimi' AS platform, 3 AS answers"))
    write_warehouse(lambda conn: conn.execute("UPDATE answers_seen SET answers = 5"))
    return snapshot


def test_formats_table_csv_and_json(two_snapshots, capsys):
    status, out, _ = _sql(capsys, "SELECT platform, answers FROM answers_seen")
    assert status == 0 and "kimi" in out and "(1 row)" in out
    status, out, _ = _sql(capsys, "SELECT platform, answers FROM answers_seen", "--format", "csv")
    assert out.splitlines() == ["platform,answers", "kimi,5"]
    status, out, _ = _sql(capsys, "SELECT platform, answers FROM answers_seen", "--format", "json")
    assert json.loads(out) == [{"platform": "kimi", "answers": 5}]


def test_as_of_reads_the_warehouse_as_it_was(two_snapshots, capsys):
    status, out, _ = _sql(capsys, "SELECT answers FROM answers_seen", "--format", "json",
                          "--as-of", str(two_snapshots))
    assert status == 0 and json.loads(out) == [{"answers": 3}]


def test_the_query_cannot_write_and_errors_are_one_line(two_snapshots, capsys):
    status, _, err = _sql(capsys, "DELETE FROM answers_seen")
    assert status == 2 and "read" in err.lower() and "Traceback" not in err
    status, _, err = _sql(capsys, "SELECT * FROM no_such_table")
    assert status == 2 and "no_such_table" in err and "Traceback" not in err
    status, _, err = _sql(capsys, "SELECT 1", "--as-of", "999999")
    assert status == 2 and "as of 999999" in err


def test_print_attach_gives_sql_a_plain_duckdb_client_runs(two_snapshots, capsys):
    status, out, _ = _sql(capsys, "--print-attach")
    assert status == 0 and "READ_ONLY" in out and "extension_directory" in out
    conn = duckdb.connect()
    for statement in out.split(";\n"):
        if statement.strip() and not statement.lstrip().startswith("--"):
            conn.execute(statement)
    assert conn.execute("SELECT answers FROM answers_seen").fetchall() == [(5,)]


def test_without_a_warehouse_it_says_so(visibility_home, capsys):
    status, _, err = _sql(capsys, "SELECT 1")
    assert status == 2 and "no warehouse" in err


def test_a_warehouse_file_of_an_earlier_version_is_imported_once(visibility_home, tmp_path, capsys):
    old = tmp_path / "warehouse.duckdb"
    with duckdb.connect(str(old)) as conn:
        conn.execute("CREATE TABLE raw_ai_responses AS SELECT 'k' || range AS request_key FROM range(3)")
        conn.execute("CREATE VIEW stg AS SELECT * FROM raw_ai_responses")
    assert main(["warehouse", "import", str(old)]) == 0
    assert "raw_ai_responses: 3 rows" in capsys.readouterr().out
    assert main(["warehouse", "import", str(old)]) == 0
    assert "nothing to copy" in capsys.readouterr().out
    status, out, _ = _sql(capsys, "SELECT count(*) AS n FROM raw_ai_responses", "--format", "json")
    assert json.loads(out) == [{"n": 3}]
    assert main(["warehouse", "import", str(tmp_path / "missing.duckdb")]) == 2


@pytest.mark.parametrize("query, said", [
    ("ATTACH 'ducklake:sqlite:{home}/warehouse/catalog.sqlite' AS rw (DATA_PATH '{home}/warehouse/data/')",
     "ATTACH is refused"),
    ("DETACH lake", "DETACH is refused"),
    ("COPY answers_seen TO '{home}/out.csv'", "COPY is refused"),
    ("INSTALL httpfs", "INSTALL or LOAD is refused"),
    ("LOAD httpfs", "INSTALL or LOAD is refused"),
    ("SELECT * FROM read_csv('/etc/passwd')", 'Cannot access file "/etc/passwd"'),
    ("SELECT content FROM read_text('{home}/dagster_home/dagster.yaml')", "Cannot access file"),
    ("CREATE TABLE memory.main.copied AS SELECT 1", "CREATE is refused"),
    ("INSERT INTO answers_seen VALUES ('qwen', 1)", "INSERT is refused"),
    ("UPDATE answers_seen SET answers = 0", "UPDATE is refused"),
    ("DELETE FROM answers_seen", "DELETE is refused"),
    ("DROP TABLE answers_seen", "DROP is refused"),
    ("SET threads = 1", "SET is refused"),
    ("PRAGMA table_info('answers_seen')", "PRAGMA is refused"),
    ("SELECT * FROM sqlite_scan('{home}/warehouse/catalog.sqlite', 'ducklake_snapshot')",
     "the function sqlite_scan is refused"),
    ("SELECT * FROM ducklake_cleanup_old_files('lake', cleanup_all => true)",
     "the function ducklake_cleanup_old_files is refused"),
    ("SELECT * FROM query('SELECT 1')", "the function query is refused"),
    ("SELECT 1; DELETE FROM answers_seen", "one query at a time (2 statements given)"),
])
def test_every_statement_but_a_select_is_refused_and_no_file_outside_the_lake_is_read(
        two_snapshots, visibility_home, capsys, query, said):
    status, out, err = _sql(capsys, query.format(home=visibility_home))
    assert status == 2 and said in err and out == "" and "Traceback" not in err, err
    status, out, _ = _sql(capsys, "SELECT platform, answers FROM answers_seen", "--format", "json")
    assert json.loads(out) == [{"platform": "kimi", "answers": 5}]  # the lake as it was
    assert not (visibility_home / "out.csv").exists()


def test_a_select_still_reads_the_lakes_snapshots_and_tables(two_snapshots, capsys):
    status, out, err = _sql(capsys, "SELECT count(*) AS n FROM ducklake_snapshots('lake')", "--format", "json")
    assert status == 0 and json.loads(out)[0]["n"] >= 2, err
