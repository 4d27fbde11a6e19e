"""judge_verdicts: the judge's labels of one partition's answers (judge.yaml; none without it)."""

from dagster import AssetExecutionContext, AssetKey, BackfillPolicy, MaterializeResult, MetadataValue, asset

from visibility_assets.collect.collector import CollectionSettings
from visibility_assets.config.resource import VisibilityConfigResource
from visibility_assets.core.partitions import Partition, run_partitions
from visibility_assets.judge.plan import JudgeItem
from visibility_assets.judge.run import INVALID, JUDGED, UNSENT, JudgeOutcome, judge_partition
from visibility_assets.warehouse.db import IN_RUN_PARTITIONS, fill_run_partitions, has_tables
from visibility_assets.warehouse.resource import WarehouseResource
from visibility_assets.warehouse.tables import JUDGE_CALLS, JUDGE_VERDICTS

# Valid answers naming tracked brands, with the brands in order of first mention.
READ_ITEMS = """
SELECT s.request_key, CAST(s.date AS VARCHAR), s.platform, s.category, r.question_text, r.answer_text,
       r.content_hash, list(b.brand ORDER BY b.first_mention_order, b.brand)
FROM cleaned_samples AS s
JOIN raw_ai_responses AS r USING (request_key, date, platform)
JOIN sample_brand_results AS b USING (request_key, date, platform)
WHERE (s.date, s.platform) IN (SELECT date, platform FROM run_partitions) AND s.valid AND b.mentioned
GROUP BY ALL
ORDER BY 2, 3, 1
"""


JUDGE_POOL = "judge"


def build_judge_verdicts(partitions_def, judged: bool = True):
    """The asset; `judged`: judge.yaml names a judge. Without one the step sends nothing and
    takes no place in the judge's pool, where it waited its turn behind every other platform's
    (up to 4 s a platform on a fast night)."""

    @asset(
        name="judge_verdicts",
        partitions_def=partitions_def,
        deps=[AssetKey("cleaned_samples")],
        backfill_policy=BackfillPolicy.single_run(),
        group_name="clean",
        kinds={"duckdb", "python"},
        # One judge step at a time across the platforms' runs: they all send to the judge's platform.
        pool=JUDGE_POOL if judged else None,
        description="judge.yaml's model asked once per valid answer that names tracked brands: per brand"
        " its sentiment, role and claims quoted from the answer (judge_verdicts), and per answer the"
        " call's status, cost and reuse (judge_calls). Empty without judge.yaml; a key judged once is"
        " never sent again.",
    )
    def judge_verdicts(context: AssetExecutionContext, visibility_config: VisibilityConfigResource,
                       warehouse: WarehouseResource) -> MaterializeResult:
        config = visibility_config.load()
        partitions = run_partitions(context.partition_keys)
        outcomes = []
        if config.judge is not None:
            items = read_items(warehouse, partitions)
            for day, platform in ((str(d), p) for d, p in partitions):
                outcome = judge_partition(config, warehouse.settings(), day, platform,
                                          [i for i in items if (i.date, i.platform) == (day, platform)],
                                          context.run_id, CollectionSettings(), context.log.info)
                if outcome.stopped:
                    context.log.warning(f"judge stopped: {outcome.stopped}; the lexicon's labels stand"
                                        " where the judge gave none")
                outcomes.append(outcome)
        # Without a judge there is nothing to write unless an earlier judge left rows to clear: a
        # read, where a write of nothing took the lake's writer turn from the other platforms.
        snapshot = None
        if config.judge is not None or judged_before(warehouse, partitions):
            snapshot = write_outcomes(warehouse, outcomes, partitions)
        return MaterializeResult(metadata=judge_metadata(config.judge, outcomes, snapshot))

    return judge_verdicts


def read_items(warehouse: WarehouseResource, partitions: list[Partition]) -> list[JudgeItem]:
    with warehouse.read_only() as conn:
        if not has_tables(conn, "cleaned_samples", "raw_ai_responses", "sample_brand_results"):
            return []
        fill_run_partitions(conn, partitions)
        return [JudgeItem(*row[:7], tuple(row[7])) for row in conn.execute(READ_ITEMS).fetchall()]


def judged_before(warehouse: WarehouseResource, partitions: list[Partition]) -> bool:
    """Whether the judge's tables hold rows of these partitions."""
    with warehouse.read_only() as conn:
        if not has_tables(conn, JUDGE_CALLS.name):
            return False
        fill_run_partitions(conn, partitions)
        return conn.execute("SELECT count(*) > 0 FROM " + JUDGE_CALLS.name + " WHERE " + IN_RUN_PARTITIONS).fetchone()[0]


def write_outcomes(warehouse: WarehouseResource, outcomes: list[JudgeOutcome], partitions: list[Partition]):
    """Every partition's rows replaced at once (none without a judge: the table follows judge.yaml;
    the journal keeps the replies, so a judge configured again pays nothing for them)."""
    calls = [c for o in outcomes for c in o.calls]
    verdicts = [v for o in outcomes for v in o.verdicts]
    return warehouse.replace_partitions({JUDGE_CALLS.name: JUDGE_CALLS.from_dicts(calls),
                                         JUDGE_VERDICTS.name: JUDGE_VERDICTS.from_dicts(verdicts)}, partitions)


def judge_metadata(judge, outcomes: list[JudgeOutcome], snapshot) -> dict:
    if judge is None:
        return {"judge": "none (no judge.yaml)", "lake_snapshot_id": snapshot}
    costs = [c["cost"] for o in outcomes for c in o.calls if c["cost"] is not None]
    return {
        "judge": f"{judge.platform} {judge.model or ''}".strip(), "prompt_version": judge.prompt_version,
        "answers": sum(len(o.calls) for o in outcomes),
        "judged": sum(o.count(JUDGED) for o in outcomes), "invalid": sum(o.count(INVALID) for o in outcomes),
        "unsent": sum(o.count(UNSENT) for o in outcomes), "requests_sent": sum(o.sent for o in outcomes),
        "cost": round(sum(costs), 6) if costs else None,
        "currency": next((c["currency"] for o in outcomes for c in o.calls if c["currency"]), None),
        "stopped": MetadataValue.json([o.stopped for o in outcomes if o.stopped]),
        "lake_snapshot_id": snapshot,
    }
