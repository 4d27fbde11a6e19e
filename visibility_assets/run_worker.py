"""A worker process of runs.materialize_partitions: one partition's nightly run.

The worker server (multiprocessing's forkserver) imports this module once, and with it the
whole pipeline; each worker is forked from it and only builds the definitions and runs.
"""

import gc
import json
import logging
import os
import sys
import warnings
from dataclasses import asdict

# Importing the pipeline marks backfill_policy and friends as beta, on the server's stderr
# (the terminal of the command): not news to a user, as cli/main.py says too. So the filter
# comes before the imports.
warnings.filterwarnings("ignore", message=r".*is currently in (beta|preview).*")

from visibility_assets.config import load_config  # noqa: E402
from visibility_assets.core.faults import DOWNSTREAM, as_disk_full  # noqa: E402
from visibility_assets.core.progress import printing_progress  # noqa: E402
from visibility_assets.definitions import build_definitions  # noqa: E402
from visibility_assets.operate.instance import get_instance  # noqa: E402
from visibility_assets.partition_run import PartitionRun, materialize_partition  # noqa: E402

# What building the instance imports (its storage, the run launcher, Dagster's daemon package):
# ~0.3 s that every worker paid before its run could start.
import dagster._core.storage.base_storage  # noqa: E402, F401
import dagster._core.storage.runs  # noqa: E402, F401
import dagster._daemon  # noqa: E402, F401

import visibility_assets.operate.instance.event_log  # noqa: E402, F401
import visibility_assets.operate.instance.launcher  # noqa: E402, F401

# What a run imported on first use, each in every worker (~540 modules, ~1 CPU-s a worker on two
# cores): DuckDB's first bound parameter imports pandas and pyarrow to check the value's type,
# httpcore's pool imports trio and anyio, the instance its secrets loader and UPath, a run its
# in-process executor. Imported here, the server pays them once.
import _strptime  # noqa: E402, F401

import anyio._backends._asyncio  # noqa: E402, F401
import anyio.streams.memory  # noqa: E402, F401
import anyio.streams.stapled  # noqa: E402, F401
import anyio.streams.tls  # noqa: E402, F401
import anyio.to_thread  # noqa: E402, F401
import dagster._core.definitions.external_asset  # noqa: E402, F401
import dagster._core.definitions.repository_definition.repository_data_builder  # noqa: E402, F401
import dagster._core.execution.execute_in_process  # noqa: E402, F401
import dagster._core.execution.plan.active  # noqa: E402, F401
import dagster._core.executor.in_process  # noqa: E402, F401
import dagster._core.instance.factory  # noqa: E402, F401
import dagster._core.instance.runs.run_domain  # noqa: E402, F401
import dagster._core.secrets.env_file  # noqa: E402, F401
import dagster._core.storage.local_compute_log_manager  # noqa: E402, F401
import dagster._core.storage.migration.utils  # noqa: E402, F401
import dagster._core.storage.root  # noqa: E402, F401
import dagster._core.system_config.composite_descent  # noqa: E402, F401
import dateutil.parser  # noqa: E402, F401
import duckdb_ext  # noqa: E402, F401
import fsspec.implementations.local  # noqa: E402, F401
import httpcore._sync.connection  # noqa: E402, F401
import pandas  # noqa: E402, F401
import pyarrow.dataset  # noqa: E402, F401
import pyarrow.fs  # noqa: E402, F401
import pyarrow.pandas_compat  # noqa: E402, F401
import pyarrow.substrait  # noqa: E402, F401
import upath.implementations.local  # noqa: E402, F401
import watchdog.observers.polling  # noqa: E402, F401

# The learned sentiment model, read and indexed once here (~0.2 CPU-s) rather than by each
# worker's cleaning step: at 100 rps a night's six cleaning steps run at the same moment.
from visibility_assets.clean.sentiment_model import shipped_model  # noqa: E402

shipped_model().predict_brands([], [])

# The imported pipeline set aside from the collector: a worker's collections then never walk
# (and so never copy) the pages its server's imports filled, which the workers share.
gc.freeze()


def partition_run(date: str, platform: str, request: dict) -> PartitionRun:
    try:
        defs = build_definitions(load_config(request.get("config_dir")))  # None: $VISIBILITY_CONFIG_DIR
        return materialize_partition(defs, date, platform, get_instance(), request.get("run_config"),
                                     run_id=request.get("run_id"))
    except Exception as exc:
        full = as_disk_full(exc)  # Dagster's own storage refused: said once, not as a traceback
        if full is None:
            raise
        return PartitionRun(date, platform, False, request.get("run_id") or "", {}, str(full), DOWNSTREAM)


def run_partition(date: str, platform: str, request: dict, sender, log_path: str) -> None:
    """A forked worker: the caller's environment and directory, its output to `log_path`."""
    os.environ.clear()
    os.environ.update(request["environment"])
    os.chdir(request["cwd"])
    # The waits of a long retry still reach the terminal of the command (progress.py).
    terminal = os.fdopen(os.dup(2), "w", encoding="utf-8", errors="replace")
    with open(log_path, "w", encoding="utf-8") as log:  # the run's own output, read if it dies
        os.dup2(log.fileno(), 1)
        os.dup2(log.fileno(), 2)
    with printing_progress(terminal, logging.WARNING):
        sender.send(asdict(partition_run(date, platform, request)))
    sender.close()


def main() -> None:
    """`python -m visibility_assets.run_worker DATE PLATFORM` with the request (config_dir,
    run_config) as JSON on stdin: one partition in a process of its own, its PartitionRun as
    JSON on the last stdout line (the crash tests kill such a process)."""
    request = json.loads(sys.stdin.read() or "{}")
    print(json.dumps(asdict(partition_run(sys.argv[1], sys.argv[2], request)), default=str))


if __name__ == "__main__":
    main()
