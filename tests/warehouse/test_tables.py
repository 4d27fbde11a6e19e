"""Each table's schema is written once; its DDL and batches come from it, and a warehouse made
by an older version gains the newer optional columns."""

import pyarrow as pa

from visibility_assets.warehouse.db import ensure_table
from visibility_assets.warehouse.lake import LakeSettings, write_with_retry
from visibility_assets.warehouse.tables import COLLECTION_TABLES, JOURNAL_REQUESTS, RAW_AI_RESPONSES, Table, optional


def test_the_ddl_creates_the_schema_it_was_written_from(tmp_path):
    def create(conn):
        for table in COLLECTION_TABLES:
            ensure_table(conn, table)
            created = [row[0] for row in conn.execute("DESCRIBE " + table.name).fetchall()]
            assert created == table.columns

    write_with_retry(LakeSettings.from_env(tmp_path), create)


def test_a_table_of_an_older_schema_gains_the_new_optional_columns_and_keeps_its_rows(tmp_path):
    lake = LakeSettings.from_env(tmp_path)
    older = Table(JOURNAL_REQUESTS.name, tuple(f for f in JOURNAL_REQUESTS.fields if f.name != "scene"))
    write_with_retry(lake, lambda conn: [conn.execute(older.ddl()), conn.execute(
        "INSERT INTO journal_requests (request_key, date, platform, question_id, question_text, category, round,"
        " priority, model, params_json, prompt_hash, state, attempts, updated_at) VALUES"
        " ('k', DATE '2026-11-01', 'kimi', 'q1', 't', 'cloud', 1, 0, 'm', '{}', 'h', 'pending', 0, now())")])
    rows, _ = write_with_retry(lake, lambda conn: [ensure_table(conn, JOURNAL_REQUESTS), conn.execute(
        "SELECT request_key, scene FROM journal_requests").fetchall()][1])
    assert rows == [("k", None)]


def test_batches_take_rows_in_column_order():
    table = Table("t", (optional("a", pa.string()), optional("b", pa.int32())))
    assert table.batch([("x", 1), ("y", None)]).to_pylist() == [{"a": "x", "b": 1}, {"a": "y", "b": None}]
    assert table.batch([]).num_rows == 0
    assert "scene" in RAW_AI_RESPONSES.columns and "priority" not in RAW_AI_RESPONSES.columns
