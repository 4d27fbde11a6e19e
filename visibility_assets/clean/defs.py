"""Clean: brand_catalog and cleaned_samples, the analysis of raw answers, re-runnable at any time."""

from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from pathlib import Path

from dagster import (
    AssetExecutionContext,
    AssetKey,
    BackfillPolicy,
    DataVersion,
    Failure,
    MaterializeResult,
    MetadataValue,
    MultiPartitionsDefinition,
    asset,
)

from visibility_assets.clean.analyzer import ANALYZER_VERSION
from visibility_assets.clean.samples import RawAnswer, SampleCleaner
from visibility_assets.config import DomainClass
from visibility_assets.config.resource import VisibilityConfigResource
from visibility_assets.config.schema import MAX_ANSWER_CHARS
from visibility_assets.core.faults import RULE
from visibility_assets.core.partitions import Partition, run_partitions
from visibility_assets.core.paths import DataDirResource
from visibility_assets.review.store import ReviewStore
from visibility_assets.warehouse.db import IN_RUN_PARTITIONS, ensure_table, fill_run_partitions, has_tables
from visibility_assets.warehouse.resource import WarehouseResource
from visibility_assets.warehouse.tables import BRAND_CATALOG, BRAND_CATALOG_VERSIONS, LABEL_REVIEWS

QUARANTINE_SHARE_LIMIT = 0.05  # a partition fails when more of its samples cannot be analysed

READ_RAW = """
SELECT request_key, date, platform, question_id, question_text, category, round, answer_text,
       coalesce(outcome, 'answered'),
       list_transform(list_filter(coalesce(citations, []), lambda c: c.source = 'platform'), lambda c: c.url),
       variant,
       list_transform(list_filter(coalesce(citations, []), lambda c: c.source = 'platform'), lambda c: c.index)
FROM raw_ai_responses
WHERE """ + IN_RUN_PARTITIONS + """
ORDER BY date, platform, question_id, round
"""
@asset(
    deps=[AssetKey("visibility_config_files")],
    group_name="clean",
    kinds={"duckdb", "yaml"},
    description="brands.yaml loaded into the warehouse. Its data version is the hash of the file,"
    " so an alias change shows in the lineage and marks cleaned samples stale.",
)
def brand_catalog(visibility_config: VisibilityConfigResource, warehouse: WarehouseResource) -> MaterializeResult:
    catalog = visibility_config.load().catalog
    now = datetime.now(UTC)
    rows = BRAND_CATALOG.batch([
        (b.name, b.category, list(b.aliases), list(b.exclude_contexts), list(b.domains), catalog.version, now)
        for b in catalog.brands])
    def load(conn) -> None:
        for table in (BRAND_CATALOG, BRAND_CATALOG_VERSIONS):
            ensure_table(conn, table)
        conn.execute("DELETE FROM brand_catalog")
        conn.register("catalog_rows", rows)
        conn.execute("INSERT INTO brand_catalog BY NAME SELECT * FROM catalog_rows")
        conn.execute("INSERT INTO brand_catalog_versions BY NAME SELECT $version AS config_version,"
                     " $now AS first_loaded_at, $yaml AS brands_yaml"
                     " WHERE $version NOT IN (SELECT config_version FROM brand_catalog_versions)",
                     {"version": catalog.version, "now": now, "yaml": catalog.path.read_text(encoding="utf-8")})

    _, snapshot = warehouse.write(load)
    return MaterializeResult(
        data_version=DataVersion(catalog.version),
        metadata={"config_version": catalog.version, "brands": len(catalog.brands),
                  "aliases": sum(len(b.aliases) for b in catalog.brands),
                  "categories": MetadataValue.json(list(catalog.categories)), "lake_snapshot_id": snapshot},
    )


def build_cleaned_samples(partitions_def: MultiPartitionsDefinition):
    @asset(
        name="cleaned_samples",
        partitions_def=partitions_def,
        deps=[AssetKey("raw_ai_responses"), brand_catalog],
        backfill_policy=BackfillPolicy.single_run(),
        group_name="clean",
        kinds={"duckdb", "python"},
        description="One row per raw answer: validity and, per brand of its category, mentions, first"
        " order, list rank and recommendation; with entity_matches (every alias hit, accepted or"
        " rejected and why), sample_state_history and sample_quarantine. Never calls a platform.",
    )
    def cleaned_samples(
        context: AssetExecutionContext,
        visibility_config: VisibilityConfigResource,
        warehouse: WarehouseResource,
        data_dir: DataDirResource,
    ) -> MaterializeResult:
        partitions = run_partitions(context.partition_keys)
        config = visibility_config.load()
        return clean_partitions(partitions, config.catalog, warehouse, context.run_id, config.domains,
                                visibility_config.max_answer_chars, config.question_weights,
                                ReviewStore.under(Path(data_dir.path)))

    return cleaned_samples


def clean_partitions(partitions: list[Partition], catalog, warehouse: WarehouseResource,
                     run_id: str, domains: Sequence[DomainClass] = (),
                     max_answer_chars: int = MAX_ANSWER_CHARS,
                     weights: Mapping[str, float] | None = None,
                     reviews: ReviewStore | None = None) -> MaterializeResult:
    """Analyse every raw answer of the partitions again and replace their cleaned rows, with the
    analysts' reviews of them (label_reviews, from `reviews`: none without a store).
    weights: each question's weight (config.question_weights), recorded with its answers."""
    answers = _read_answers(warehouse, partitions)
    batch = SampleCleaner(catalog, run_id, domains, max_answer_chars, weights).clean(answers)
    reviewed = reviews.effective(partitions) if reviews is not None else []
    snapshot = warehouse.replace_partitions({**batch.tables(), LABEL_REVIEWS.name: LABEL_REVIEWS.from_dicts(reviewed)},
                                            partitions)

    valid = sum(1 for s in batch.samples if s["valid"])
    reasons: dict[str, int] = {}
    for sample in batch.samples:
        if not sample["valid"]:
            reasons[sample["invalid_reason"]] = reasons.get(sample["invalid_reason"], 0) + 1
    metadata = {
        "partitions": len(partitions),
        "samples": len(batch.samples),
        "valid": valid,
        "invalid_by_reason": MetadataValue.json(reasons),
        "quarantined": len(batch.quarantine),
        "analysis_capped": sum(1 for s in batch.samples if s["analysis_capped"]),
        "alias_hits": len(batch.matches),
        "accepted_mentions": sum(1 for m in batch.matches if m["accepted"]),
        "reviewed_labels": len(reviewed),
        "analyzer_version": ANALYZER_VERSION,
        "config_version": catalog.version,
        "lake_snapshot_id": snapshot,
    }
    share = len(batch.quarantine) / max(1, len(answers))
    if share > QUARANTINE_SHARE_LIMIT:
        first = batch.quarantine[0]["error"]
        raise Failure(description=f"{len(batch.quarantine)} of {len(answers)} samples quarantined"
                      f" ({share:.0%} > {QUARANTINE_SHARE_LIMIT:.0%}); first error: {first}",
                      metadata={**metadata, "fault_class": RULE})  # the analyzer's, not the platform's
    return MaterializeResult(metadata=metadata)


def _read_answers(warehouse: WarehouseResource, partitions: list[Partition]) -> list[RawAnswer]:
    if not warehouse.exists():
        return []
    with warehouse.read_only() as conn:
        if not has_tables(conn, "raw_ai_responses"):
            return []
        fill_run_partitions(conn, partitions)
        rows = conn.execute(READ_RAW).fetchall()
    return [RawAnswer(*row) for row in rows]
