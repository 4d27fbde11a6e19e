"""Replay (`visibility replay`): the current analyzer over stored answers, compared field by
field with what cleaning stored for them, before an analyzer upgrade switches.

One query reads a deterministic sample of raw_ai_responses with its cleaned_samples row and
its sample_brand_results rows; the cleaner analyses the sample again in memory and the
comparison runs over Python dicts. Only samples cleaned with the current catalog's version are
compared: under another version an alias change, not the analyzer, would show as a diff.
Nothing here writes; replay_record.py records the summary where no metric reads it.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable
from datetime import UTC, date, datetime
from typing import Protocol

import duckdb

from visibility_assets.clean.analyzer import ANALYZER_VERSION
from visibility_assets.clean.replay_diff import (
    BRAND_FIELDS,
    FIELDS,
    QUARANTINED,
    SAMPLE_FIELDS,
    Diff,
    Example,
    ReplayFindings,
)
from visibility_assets.clean.replay_reviews import reviewer_agreement
from visibility_assets.clean.samples import CleanedBatch, RawAnswer, SampleCleaner
from visibility_assets.config import BrandCatalog
from visibility_assets.warehouse.db import existing_tables

RUN_ID = "replay"  # the run id the replayed rows carry; they are never stored
DEFAULT_EXAMPLES = 5
EXCERPT_RADIUS = 40  # characters either side of the brand's first alias hit
OPENING = 80  # characters of the answer shown for a difference in its validity
TABLES_READ = ("raw_ai_responses", "cleaned_samples", "sample_brand_results")

# The sample: the first N stored answers in md5 order of their request key, the same N on every
# run and spread over days and platforms. Outcome and platform citations are read as cleaning
# reads them (clean/defs.py, READ_RAW); each answer's brand rows come as one list.
READ_STORED = """
WITH sampled AS (
    SELECT r.request_key, r.date, r.platform, r.question_id, r.question_text, r.category, r.round,
           r.answer_text, coalesce(r.outcome, 'answered') AS outcome,
           list_transform(list_filter(coalesce(r.citations, []), lambda c: c.source = 'platform'),
                          lambda c: c.url) AS platform_citations,
           s.valid, s.invalid_reason, s.config_version, s.analyzer_version
    FROM raw_ai_responses AS r JOIN cleaned_samples AS s USING (request_key, date, platform)
    WHERE $since::DATE IS NULL OR r.date >= $since::DATE
    ORDER BY md5(r.request_key)
    LIMIT $sample
), brands AS (
    SELECT request_key,
           list({'brand': brand, 'mentioned': mentioned, 'mention_count': mention_count,
                 'first_mention_order': first_mention_order, 'list_rank': list_rank,
                 'recommended': recommended}) AS brands
    FROM sample_brand_results SEMI JOIN sampled USING (request_key, date, platform)
    GROUP BY request_key
)
SELECT sampled.*, brands.brands FROM sampled LEFT JOIN brands USING (request_key)
ORDER BY md5(sampled.request_key)
"""


class Cleaner(Protocol):
    def clean(self, answers: list[RawAnswer]) -> CleanedBatch: ...


CleanerFactory = Callable[[BrandCatalog], Cleaner]


class ReplayError(Exception):
    """The warehouse holds nothing a replay can read."""


def current_cleaner(catalog: BrandCatalog) -> SampleCleaner:
    """The cleaner the pipeline runs, with the analyzer of this checkout."""
    return SampleCleaner(catalog, RUN_ID)


def replay(conn: duckdb.DuckDBPyConnection, catalog: BrandCatalog, sample: int | None = None,
           since: date | None = None, analyzer_factory: CleanerFactory = current_cleaner,
           examples: int = DEFAULT_EXAMPLES) -> ReplayFindings:
    """Analyse a sample of stored answers again (`sample` of them, or all; from `since` on)
    with the cleaner `analyzer_factory(catalog)` makes, and compare with what is stored."""
    if sample is not None and sample < 1:
        raise ReplayError(f"the sample must hold at least one answer, not {sample}")
    started = time.perf_counter()
    stored = read_stored(conn, sample, since)
    read = time.perf_counter()
    current = [row for row in stored if row["config_version"] == catalog.version]
    batch = analyzer_factory(catalog).clean([_raw_answer(row) for row in current])
    analysed = time.perf_counter()

    report = ReplayFindings(uuid.uuid4().hex, datetime.now(UTC), catalog.version, _analyzer_version(batch),
                          since, sample)
    for row in stored:
        if row["config_version"] != catalog.version:
            report.platform(row["platform"]).skipped_other_config += 1
    compare(report, current, batch, examples)
    replayed: dict[str, dict[str, dict]] = {}
    for row in batch.brand_results:
        replayed.setdefault(row["request_key"], {})[row["brand"]] = row
    report.reviewers = reviewer_agreement(conn, current, replayed)
    report.timings = {"read": read - started, "analyse": analysed - read,
                      "compare": time.perf_counter() - analysed}
    return report


def read_stored(conn: duckdb.DuckDBPyConnection, sample: int | None, since: date | None) -> list[dict]:
    """The sampled stored answers, each a dict of READ_STORED's columns (one query)."""
    missing = [name for name in TABLES_READ if name not in existing_tables(conn)]
    if missing:
        raise ReplayError(f"the warehouse has no {', '.join(missing)} yet: collect and clean some partitions first")
    return conn.execute(READ_STORED, {"since": since, "sample": sample}).fetch_arrow_table().to_pylist()


def _raw_answer(row: dict) -> RawAnswer:
    return RawAnswer(row["request_key"], row["date"], row["platform"], row["question_id"], row["question_text"],
                     row["category"], row["round"], row["answer_text"], row["outcome"],
                     tuple(row["platform_citations"] or ()))


def _analyzer_version(batch: CleanedBatch) -> str:
    """The version the replayed rows carry (an injected cleaner may name its own)."""
    versions = sorted({s["analyzer_version"] for s in batch.samples})
    return ",".join(versions) or ANALYZER_VERSION


# --- comparing -----------------------------------------------------------------------------

def compare(report: ReplayFindings, stored: list[dict], batch: CleanedBatch, examples: int) -> None:
    """Count each stored answer's differences into its platform and day; keep up to `examples`
    examples per platform."""
    samples = {s["request_key"]: s for s in batch.samples}
    brand_rows: dict[str, dict[str, dict]] = {}
    for row in batch.brand_results:
        brand_rows.setdefault(row["request_key"], {})[row["brand"]] = row
    candidates: dict[str, dict[str, list[tuple[dict, Diff]]]] = {}  # platform -> field -> first diffs
    for row in stored:
        key = row["request_key"]
        diffs = differences(row, samples.get(key), brand_rows.get(key, {}))
        report.platform(row["platform"]).tally.count(diffs)
        day = report.day(row["platform"], row["date"])
        day.count(diffs)
        day.stored_analyzer_versions.add(row["analyzer_version"])
        by_field = candidates.setdefault(row["platform"], {})
        for diff in diffs:
            kept = by_field.setdefault(diff.field, [])
            if len(kept) < examples:
                kept.append((row, diff))
    for platform, by_field in candidates.items():
        report.platforms[platform].examples = _examples(_pick(by_field, examples), batch)


def differences(stored: dict, replayed: dict | None, replayed_brands: dict[str, dict]) -> list[Diff]:
    """Each compared field whose replayed value differs from the stored one."""
    if replayed is None:
        return [Diff(QUARANTINED, None, False, True)]
    diffs = [Diff(name, None, stored[name], replayed[name]) for name in SAMPLE_FIELDS
             if stored[name] != replayed[name]]
    stored_brands = {b["brand"]: b for b in stored["brands"] or ()}
    for brand in dict.fromkeys([*stored_brands, *replayed_brands]):  # catalog order, as cleaning wrote them
        old, new = stored_brands.get(brand, {}), replayed_brands.get(brand, {})
        diffs += [Diff(name, brand, old.get(name), new.get(name)) for name in BRAND_FIELDS
                  if old.get(name) != new.get(name)]
    return diffs


def _pick(by_field: dict[str, list[tuple[dict, Diff]]], limit: int) -> list[tuple[dict, Diff]]:
    """Up to `limit` examples, taking the fields in turn so that a rare field shows next to a
    frequent one."""
    queues = [list(by_field[name]) for name in FIELDS if name in by_field]
    picked: list[tuple[dict, Diff]] = []
    while len(picked) < limit and any(queues):
        for queue in queues:
            if queue and len(picked) < limit:
                picked.append(queue.pop(0))
    return picked


def _examples(picked: list[tuple[dict, Diff]], batch: CleanedBatch) -> list[Example]:
    spans = _first_hits(batch, {(row["request_key"], diff.brand) for row, diff in picked if diff.brand})
    return [Example(row["request_key"], row["date"], row["platform"], row["question_id"], diff.field, diff.brand,
                    diff.stored, diff.replayed,
                    excerpt(row["answer_text"], spans.get((row["request_key"], diff.brand))
                            or _name_span(row["answer_text"], diff.brand)))
            for row, diff in picked]


def _first_hits(batch: CleanedBatch, wanted: set[tuple[str, str]]) -> dict[tuple[str, str], tuple[int, int]]:
    """Where the replay first found each wanted (request_key, brand), preferring accepted hits."""
    spans: dict[tuple[str, str], tuple[int, int, bool]] = {}
    for match in batch.matches:
        key = (match["request_key"], match["brand"])
        if key in wanted and (key not in spans or (match["accepted"] and not spans[key][2])):
            spans[key] = (match["start_pos"], match["end_pos"], match["accepted"])
    return {key: (start, end) for key, (start, end, _) in spans.items()}


def _name_span(text: str | None, brand: str | None) -> tuple[int, int] | None:
    """The brand's name in the text, when the replay found no alias of it (or None)."""
    position = (text or "").find(brand) if brand else -1
    return (position, position + len(brand)) if position >= 0 else None


def excerpt(text: str | None, span: tuple[int, int] | None) -> str:
    """The answer around the span, on one line; its opening when there is no span."""
    text = text or ""
    if span:
        left, right = max(0, span[0] - EXCERPT_RADIUS), min(len(text), span[1] + EXCERPT_RADIUS)
    else:
        left, right = 0, min(len(text), OPENING)
    snippet = " ".join(text[left:right].split())
    return ("…" if left > 0 else "") + snippet + ("…" if right < len(text) else "")
