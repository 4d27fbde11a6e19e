"""`visibility bench ingest`: raw answers written partition by partition (delete, then insert
from Arrow, one transaction each, as publishing does) into the lake on its embedded default,
side by side with a single DuckDB file, the warehouse before the lake."""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path

import duckdb
import pyarrow as pa
import pyarrow.compute as pc

from visibility_assets.tools.bench import LAST_DAY, scratch_home
from visibility_assets.tools.simulator.answers import KNOWN_PLATFORMS
from visibility_assets.warehouse.tables import RAW_AI_RESPONSES

ANSWER = "根据公开资料，阿里云、腾讯云和华为云在国内云计算市场份额居前。" * 12  # ~400 characters, as answers run
REPLACE = ("DELETE FROM raw_ai_responses WHERE date = $date AND platform = $platform",
           "INSERT INTO raw_ai_responses BY NAME SELECT * FROM batch")


def partition_batch(day, platform: str, rows: int) -> pa.Table:
    """`rows` answers of one partition in the schema of raw_ai_responses."""
    index = pa.array(range(rows), pa.int64())
    keys = pc.binary_join_element_wise(pa.scalar(f"{day}-{platform}-"), pc.cast(index, pa.string()), "")
    now = datetime.now(UTC)
    columns = {}
    for field in RAW_AI_RESPONSES.fields:
        if field.name == "request_key":
            columns[field.name] = keys
        elif field.name == "date":
            columns[field.name] = pa.array([day] * rows, field.type)
        elif field.name == "platform":
            columns[field.name] = pa.array([platform] * rows, field.type)
        elif field.name in ("answer_text",):
            columns[field.name] = pa.array([ANSWER] * rows, field.type)
        elif pa.types.is_string(field.type):
            columns[field.name] = keys if not field.nullable else pa.nulls(rows, field.type)
        elif pa.types.is_timestamp(field.type):
            columns[field.name] = pa.array([now] * rows, field.type)
        elif not field.nullable:
            columns[field.name] = pa.array([1] * rows, field.type)
        else:
            columns[field.name] = pa.nulls(rows, field.type)
    return pa.table(columns, schema=RAW_AI_RESPONSES.schema)


def _time_writes(batches: list[tuple[str, str, pa.Table]],
                 write: Callable[[Callable[[duckdb.DuckDBPyConnection], None]], None]) -> float:
    write(lambda conn: conn.execute(RAW_AI_RESPONSES.ddl()))
    started = time.perf_counter()
    for day, platform, batch in batches:
        def replace(conn, day=day, platform=platform, batch=batch):
            conn.register("batch", batch)
            conn.execute(REPLACE[0], {"date": day, "platform": platform})
            conn.execute(REPLACE[1])
            conn.unregister("batch")
        write(replace)
    return time.perf_counter() - started


def run_ingest_bench(days: int = 10, platforms: int = 6, rows_per_partition: int = 20000,
                     progress=lambda message: print(message, file=sys.stderr)) -> dict:
    names = KNOWN_PLATFORMS[:platforms]
    batches = [(LAST_DAY - timedelta(days=d), name, None) for d in range(days) for name in names]
    batches = [(day, name, partition_batch(day, name, rows_per_partition)) for day, name, _ in batches]
    total = rows_per_partition * len(batches)
    progress(f"bench ingest: {total} raw answers in {len(batches)} partitions")
    with scratch_home("bench-ingest-") as scratch:
        from visibility_assets.warehouse.lake import lake_settings, write_with_retry

        lake = lake_settings()
        lake_s = _time_writes(batches, lambda work: write_with_retry(lake, work))

        def file_write(work):
            with duckdb.connect(str(Path(scratch) / "warehouse.duckdb")) as conn:
                conn.execute("BEGIN TRANSACTION")
                work(conn)
                conn.execute("COMMIT")

        file_s = _time_writes(batches, file_write)
    return {"rows": total, "partitions": len(batches), "rows_per_partition": rows_per_partition,
            "lake_s": round(lake_s, 2), "lake_rows_per_s": round(total / lake_s),
            "file_s": round(file_s, 2), "file_rows_per_s": round(total / file_s),
            "lake_vs_file": round(file_s / lake_s, 3),
            "definition": "raw answers written one partition per transaction (delete the partition's rows, then"
                          " insert from Arrow), into the lake on its embedded default (SQLite catalog, local"
                          " Parquet) and into one DuckDB file, the same statements, in one process"}
