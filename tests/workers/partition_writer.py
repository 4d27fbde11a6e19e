"""One platform's partition written, then written again, the way the nightly job's assets write
it, without Dagster's own bookkeeping: the raw answers (collected from the simulated platforms in
this process and published), the cleaned samples, and the mention metrics with the models they
are built from, each step the same calls and transactions as its asset.

    python -m tests.workers.partition_writer CONFIG_DIR DATE PLATFORM PASSES

Prints one JSON line: the run id of each pass and the rows it wrote.
"""

import json
import sys
import uuid

from tests.conftest import FAST, in_process
from visibility_assets.clean.defs import clean_partitions
from visibility_assets.collect.collector import collect_partitions
from visibility_assets.collect.publish import publish
from visibility_assets.config import load_config
from visibility_assets.core.partitions import Partition
from visibility_assets.measure.project import load_project
from visibility_assets.measure.runner import materialize_model
from visibility_assets.tools.simulator.behaviour import SimulatorSettings
from visibility_assets.warehouse.lake import lake_settings
from visibility_assets.warehouse.resource import WarehouseResource

MODELS = ("stg_samples", "stg_brand_results", "int_brand_daily", "fct_mention_metrics", "mention_metrics")


def write_partition(config, partition: Partition, warehouse: WarehouseResource) -> dict:
    run_id = uuid.uuid4().hex
    outcomes = collect_partitions(config, [partition], run_id, warehouse.settings())
    published = publish(warehouse, outcomes, run_id)
    clean_partitions([partition], config.catalog, warehouse, run_id, config.domains,
                     weights=config.question_weights)
    project = load_project()
    built = {name: materialize_model(warehouse, project, project.models[name],
                                     [partition] if project.models[name].partitioned else [], run_id).rows
             for name in MODELS}
    return {"run_id": run_id, "answers": [p.answers for p in published.values()], "rows": built,
            "errors": [str(o.error) for o in outcomes if o.error is not None]}


def main(config_dir: str, date: str, platform: str, passes: int) -> None:
    config = load_config(config_dir)
    warehouse = WarehouseResource.from_settings(lake_settings())
    with in_process(SimulatorSettings(seed=1, default=FAST)):
        written = [write_partition(config, Partition.of(f"{date}|{platform}"), warehouse) for _ in range(passes)]
    print(json.dumps({"platform": platform, "passes": written}))


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]))
