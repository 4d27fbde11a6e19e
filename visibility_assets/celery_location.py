"""The deployment's Celery code location: the pipeline of `definitions.py` plus
`nightly_platform_job_celery`, the nightly chain of one platform's day with each step sent to
Celery workers (dagster-celery) instead of running inside the run's own process.

Load it like the default location (`dagster dev -m visibility_assets.celery_location`, or a
`python_module` entry in workspace.yaml). Workers are started with
`dagster-celery worker start -A dagster_celery.app -y celery.yaml`, where celery.yaml holds the
same `execution: config:` block (broker, backend) that the run config gives the job. A worker
imports nothing of this package up front: each task carries the run's code pointer (this
module's `defs`) and the worker loads the job from it, so the workers need this package
installed, the same environment as the run (VISIBILITY_HOME, VISIBILITY_CONFIG_DIR,
VISIBILITY_PG_URL) and a Dagster instance they share with it (PostgreSQL storage).

`defs` is lazy (`@definitions`): the config is read when Dagster loads the location, not on
import. The Celery job itself is a module-level constant: it holds no config, only the asset
selection and the executor. Needs the `dagster-celery` package (the `dev` extra pins it).
"""

from __future__ import annotations

from dagster import Definitions, define_asset_job, definitions
from dagster_celery import celery_executor

from visibility_assets.config import load_config
from visibility_assets.definitions import build_definitions
from visibility_assets.operate.automation import nightly_job
from visibility_assets.operate.instance import batch_event_writes

CELERY_JOB_NAME = "nightly_platform_job_celery"

nightly_platform_job_celery = define_asset_job(
    CELERY_JOB_NAME,
    selection=nightly_job.selection,
    executor_def=celery_executor,
    description="nightly_platform_job with every step run by a Celery worker; the run config's"
    " execution.config names the broker and the result backend.",
)


@definitions
def defs() -> Definitions:
    """Loaded by the code server, the run's process and every Celery task (once per worker process)."""
    batch_event_writes()
    return Definitions.merge(build_definitions(load_config()), Definitions(jobs=[nightly_platform_job_celery]))
