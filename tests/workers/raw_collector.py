"""A run worker that collects one partition's raw answers: a Dagster run of raw_ai_responses
alone, on the instance $DAGSTER_HOME configures, from the config $VISIBILITY_CONFIG_DIR names
(what a machine of a scale-out deployment runs; the chain after it is not what is tested).

    python -m tests.workers.raw_collector DATE PLATFORM

Prints one JSON line: {"success": ..., "run_id": ..., "error": ...}.
"""

import json
import sys

from dagster import DagsterInstance, materialize

from tests.pipeline import raw_asset, resources
from visibility_assets.core.partitions import partition_key, partition_tags
from visibility_assets.operate.failed_runs import failure_of_run
from visibility_assets.partition_run import QUIET_RUN


def main(date: str, platform: str) -> None:
    with DagsterInstance.get() as instance:
        result = materialize([raw_asset()], partition_key=partition_key(date, platform), instance=instance,
                             resources=resources(), tags=partition_tags(date, platform), run_config=QUIET_RUN,
                             raise_on_error=False)
        error = None if result.success else failure_of_run(instance, result.run_id)[1]
    print(json.dumps({"success": result.success, "run_id": result.run_id, "error": error}))


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
