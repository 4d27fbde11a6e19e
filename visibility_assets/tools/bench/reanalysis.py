"""`visibility bench reanalysis`: the alias-change path over D days x K platforms of stored raw
answers (written by the simulator's answer generator, as collection would store them): one
single run per platform of cleaned_samples and everything downstream, as `visibility backfill`
runs it."""

from __future__ import annotations

import io
import random
import sys
import time
from datetime import UTC, datetime, timedelta

import duckdb
import pyarrow as pa

from visibility_assets.tools.bench import LAST_DAY, scratch_home


def seed_raw_answers(config, days: int, platforms=None) -> int:
    from visibility_assets.collect.plan import content_hash, plan_requests
    from visibility_assets.tools.simulator.answers import compose_answer, sim_brands_by_category
    from visibility_assets.warehouse.lake import lake_settings, write_with_retry
    from visibility_assets.warehouse.tables import RAW_AI_RESPONSES

    brands = sim_brands_by_category(config.catalog)
    rows, now = [], datetime.now(UTC)
    for offset in range(days):
        day = (LAST_DAY - timedelta(days=offset)).isoformat()
        for platform in platforms or config.platforms:
            for request in plan_requests(config, platform, day):
                text = compose_answer(random.Random(request.request_key), request.question_text,
                                      brands.get(request.category, ()), platform.name, day)
                rows.append({"request_key": request.request_key, "date": LAST_DAY - timedelta(days=offset),
                             "platform": platform.name, "question_id": request.question_id,
                             "question_text": request.question_text, "category": request.category,
                             "scene": request.scene,
                             "round": request.round, "model": request.model, "params_json": request.params_json,
                             "prompt_hash": request.prompt_hash, "answer_text": text, "payload_json": "{}",
                             "response_model": request.model, "content_hash": content_hash(text), "latency_ms": 0.0,
                             "prompt_tokens": None, "completion_tokens": None, "total_tokens": None,
                             "attempt": 1, "run_id": "seeded", "received_at": now})
    def seed(conn: duckdb.DuckDBPyConnection) -> None:
        conn.execute(RAW_AI_RESPONSES.ddl())
        conn.register("seeded", pa.Table.from_pylist(rows, schema=RAW_AI_RESPONSES.schema))
        conn.execute("INSERT INTO raw_ai_responses BY NAME SELECT * FROM seeded")

    write_with_retry(lake_settings(), seed)
    return len(rows)


def run_reanalysis_bench(days: int = 30, platforms: int = 6,
                         progress=lambda message: print(message, file=sys.stderr)) -> dict:
    with scratch_home("bench-reanalysis-"):
        from visibility_assets.config import load_config
        from visibility_assets.runs import run_backfill
        from visibility_assets.warehouse.lake import lake_settings, reading

        config = load_config()
        chosen = config.platforms[:platforms]
        answers = seed_raw_answers(config, days, chosen)
        progress(f"bench reanalysis: {answers} stored answers, {days} days x {len(chosen)} platforms")
        started = time.perf_counter()
        log = io.StringIO()
        status = run_backfill(config, LAST_DAY - timedelta(days=days - 1), LAST_DAY, [p.name for p in chosen], out=log)
        wall = time.perf_counter() - started
        progress(log.getvalue().rstrip())
        with reading(lake_settings()) as conn:
            samples = conn.execute("SELECT count(*) FROM cleaned_samples").fetchall()[0][0]
            metric_rows = conn.execute("SELECT count(*) FROM mention_metrics").fetchall()[0][0]
    return {"days": days, "platforms": len(chosen), "partitions": days * len(chosen),
            "answers": answers, "samples_reanalysed": samples, "metric_rows": metric_rows, "success": status == 0,
            "wall_s": round(wall, 2), "instance": "sqlite (the default instance)",
            "definition": "wall_s: brand_catalog, then one single run per platform over the whole date range of"
                          " cleaned_samples and every SQL model, as `visibility backfill` runs them"}
