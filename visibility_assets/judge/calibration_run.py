"""A calibration run: the labelled pairs gathered, the judge asked about the ones it has not
judged yet (judge/run.py), its verdicts scored against the labels and recorded in
judge_calibrations and judge_calibration_verdicts."""

from __future__ import annotations

import uuid
from collections.abc import Callable, Sequence
from contextlib import ExitStack
from dataclasses import dataclass, field
from datetime import UTC, date, datetime
from pathlib import Path

import duckdb

from visibility_assets.collect.collector import CollectionSettings
from visibility_assets.config import VisibilityConfig
from visibility_assets.judge.calibration import (
    CALIBRATION,
    REVIEWS_SET,
    CalibrationResult,
    CostEstimate,
    LabelledPair,
    calibration_items,
    estimate_cost,
    language_of,
    read_labelled_set,
    score_verdicts,
)
from visibility_assets.judge.plan import (
    JOURNAL_PREFIX,
    JudgeItem,
    journal_platform,
    judge_key,
    judge_platform,
    request_key,
)
from visibility_assets.judge.run import JudgeOutcome, judge_partition
from visibility_assets.review.store import RANDOM, ReviewStore
from visibility_assets.warehouse.db import ensure_table, has_tables, insert_batch
from visibility_assets.warehouse.lake import LakeSettings, reading, write_with_retry
from visibility_assets.warehouse.resource import WarehouseResource
from visibility_assets.warehouse.tables import (
    JOURNAL_TABLES,
    JUDGE_CALIBRATION_TABLES,
    JUDGE_CALIBRATION_VERDICTS,
    JUDGE_CALIBRATIONS,
)

REVIEWED_ANSWERS = """
SELECT request_key, question_text, answer_text, category FROM raw_ai_responses
WHERE list_contains($keys, request_key)
"""
# What the collector recorded for this run's requests (earlier runs' replies are read back free).
RUN_COST = """
SELECT sum(cost), any_value(currency) FROM journal_answers WHERE platform = $platform AND run_id = $run_id
"""
CALIBRATIONS_RECHECK_S = 60.0
# Each judge's (model and prompt) latest calibration, every scope of it.
LATEST_CALIBRATIONS = """
WITH latest AS (
    SELECT judge_platform, judge_model, prompt_version, arg_max(calibration_id, calibrated_at) AS calibration_id
    FROM judge_calibrations GROUP BY ALL
)
SELECT c.judge_platform, c.judge_model, c.prompt_version,
       c.judge_model || ' (prompt ' || c.prompt_version || ')' AS judge, CAST(c.calibrated_at AS DATE) AS calibrated_on,
       c.scope, c.scope_value, c.pairs, c.correct, c.accuracy, c.accuracy_low AS low, c.accuracy_high AS high,
       c.macro_f1, c.kappa
FROM judge_calibrations AS c JOIN latest USING (calibration_id)
ORDER BY c.judge_model, c.prompt_version, c.scope = 'all' DESC, c.scope, c.scope_value
"""
STORED_KEYS = """
SELECT DISTINCT request_key FROM journal_answers
WHERE starts_with(platform, $prefix) AND list_contains($keys, request_key)
"""


def reviewed_pairs(store: ReviewStore, conn: duckdb.DuckDBPyConnection) -> list[LabelledPair]:
    """The random-sample reviews that give a tone (the latest per answer and brand): an estimate
    of the judge on this deployment's answers needs a random sample of them, never the doubtful."""
    latest = {}
    for review in store.reviews():  # oldest first
        label = review.labels.get("sentiment")
        if review.queue == RANDOM and not review.skipped and label and label[3] is not None:
            latest[(review.request_key, review.brand)] = (review.language, label[3])
    if not latest or not has_tables(conn, "raw_ai_responses"):
        return []
    keys = sorted({key for key, _ in latest})
    texts = {key: rest for key, *rest in conn.execute(REVIEWED_ANSWERS, {"keys": keys}).fetchall()}
    return [LabelledPair(REVIEWS_SET, key, *texts[key], brand, value, language_of(language))
            for (key, brand), (language, value) in latest.items() if key in texts]


@dataclass
class CalibrationPlan:
    pairs: list[LabelledPair]
    items: list[JudgeItem]
    stored: int  # items the judge answered before (any judge partition): read back, not paid
    estimate: CostEstimate  # of the items still to ask

    @property
    def by_set(self) -> dict[str, int]:
        counts: dict[str, int] = {}
        for pair in self.pairs:
            counts[pair.set_name] = counts.get(pair.set_name, 0) + 1
        return counts


def plan_calibration(config: VisibilityConfig, lake: LakeSettings, sets: Sequence[Path], store: ReviewStore | None,
                     day: str, limit: int | None = None) -> CalibrationPlan:
    """The pairs of the sets (and the random reviews when `store`), at most `limit` answers of
    them (the same ones every time: by content hash), and what asking about them should cost."""
    assert config.judge is not None
    pairs = [pair for path in sets for pair in read_labelled_set(path)]
    judge_on = judge_platform(config)
    with ExitStack() as stack:
        exists = WarehouseResource.from_settings(lake).exists()
        conn = stack.enter_context(reading(lake)) if exists else None  # a new deployment has no lake yet
        if store is not None and conn is not None:
            pairs += reviewed_pairs(store, conn)
        items = calibration_items(pairs, day)
        if limit is not None and len(items) > limit:
            items = sorted(items, key=lambda i: i.content_hash)[:limit]
            kept = {(i.question, i.answer, i.category) for i in items}
            pairs = [p for p in pairs if (p.question, p.answer, p.category) in kept]
        keys = [judge_key(i, config.judge, judge_on) for i in items]
        stored = set()
        if conn is not None and has_tables(conn, "journal_answers"):
            stored = {row[0] for row in conn.execute(STORED_KEYS, {"prefix": JOURNAL_PREFIX, "keys": keys}).fetchall()}
    to_ask = [i for i, k in zip(items, keys) if request_key(k, 1) not in stored]
    return CalibrationPlan(pairs, items, len(items) - len(to_ask),
                           estimate_cost(config, judge_on, to_ask, date.fromisoformat(day)))


@dataclass
class CalibrationRun:
    calibration_id: str
    result: CalibrationResult
    outcome: JudgeOutcome
    cost: float | None  # of the requests this run sent, as the collector recorded them
    currency: str | None
    calibrated_at: datetime = field(default_factory=lambda: datetime.now(UTC))


def run_calibration(config: VisibilityConfig, lake: LakeSettings, plan: CalibrationPlan, day: str,
                    settings: CollectionSettings = CollectionSettings(),
                    log: Callable[[str], None] = lambda _: None) -> CalibrationRun:
    calibration_id = str(uuid.uuid4())
    write_with_retry(lake, _ensure_tables)  # the judge's path reads the lake: a new deployment has none yet
    outcome = judge_partition(config, lake, day, CALIBRATION, plan.items, calibration_id, settings, log,
                              every_item=True)
    verdicts = {(v["request_key"], v["brand"]): v["sentiment"] for v in outcome.verdicts}
    with reading(lake) as conn:
        cost, currency = conn.execute(RUN_COST, {"platform": journal_platform(CALIBRATION),
                                                 "run_id": calibration_id}).fetchone()
    run = CalibrationRun(calibration_id, score_verdicts(plan.pairs, verdicts), outcome, cost, currency)
    record_calibration(lake, config, run)
    return run


def record_calibration(lake: LakeSettings, config: VisibilityConfig, run: CalibrationRun) -> None:
    """Both tables' rows in one transaction."""
    judge, judge_on = config.judge, judge_platform(config)
    assert judge is not None
    result = run.result
    common = (run.calibration_id, run.calibrated_at, judge_on.name, judge_on.model, judge.prompt_version)
    scopes = [("all", "all", result.overall)] + [("language", k, s) for k, s in result.by_language.items()] + [
        ("set", k, s) for k, s in result.by_set.items()]
    summary = [(*common, scope, value, s.n, s.correct, s.accuracy, s.low, s.high, s.macro_f1, s.kappa,
                result.unjudged if scope == "all" else 0, run.outcome.sent, run.cost, run.currency)
               for scope, value, s in scopes]
    verdicts = [(run.calibration_id, p.set_name, p.item_id, p.brand, p.language, p.label, verdict)
                for p, verdict in result.judged_pairs]

    def append(conn: duckdb.DuckDBPyConnection) -> None:
        _ensure_tables(conn)
        insert_batch(conn, JUDGE_CALIBRATIONS, JUDGE_CALIBRATIONS.batch(summary))
        if verdicts:
            insert_batch(conn, JUDGE_CALIBRATION_VERDICTS, JUDGE_CALIBRATION_VERDICTS.batch(verdicts))

    write_with_retry(lake, append)


def _ensure_tables(conn: duckdb.DuckDBPyConnection) -> None:
    for table in (*JOURNAL_TABLES, *JUDGE_CALIBRATION_TABLES):
        ensure_table(conn, table)


def latest_calibrations(conn: duckdb.DuckDBPyConnection) -> list[dict]:
    """Each judge's latest calibration, a row per scope (all, each language, each set)."""
    # Only `visibility judge calibrate` makes the table: a workspace without one asks once a minute.
    if not has_tables(conn, JUDGE_CALIBRATIONS.name, recheck_absent_s=CALIBRATIONS_RECHECK_S):
        return []
    cursor = conn.execute(LATEST_CALIBRATIONS)
    columns = [d[0] for d in cursor.description]
    return [dict(zip(columns, row)) for row in cursor.fetchall()]
