"""One platform's partition materialized, then materialized again, as a run worker does it:
the raw answers (from the simulated platforms in this process), the cleaned samples and the
mention metrics, each pass replacing the partition's rows in one transaction per table.

    python -m tests.workers.partition_writer CONFIG_DIR DATE PLATFORM PASSES

Prints one JSON line: the success and run id of each pass.
"""

import json
import os
import sys

from dagster import DagsterInstance

from tests.conftest import FAST, in_process
from tests.pipeline import materialize_for
from visibility_assets.config import CONFIG_DIR_ENV
from visibility_assets.tools.simulator.behaviour import SimulatorSettings


def main(config_dir: str, date: str, platform: str, passes: int) -> None:
    os.environ[CONFIG_DIR_ENV] = config_dir
    instance = DagsterInstance.ephemeral()
    results = []
    with in_process(SimulatorSettings(seed=1, default=FAST)):
        for _ in range(passes):
            run = materialize_for(["mention_metrics"], date, platform, instance)
            failures = [e.event_specific_data.error.message for e in run.get_step_failure_events()]
            results.append({"success": run.success, "run_id": run.run_id, "errors": failures})
    print(json.dumps({"platform": platform, "passes": results}))


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]))
