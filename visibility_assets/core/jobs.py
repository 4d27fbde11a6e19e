"""The names of the pipeline's jobs, and the tags of their runs. The jobs themselves are defined once, in
operate/automation.py; a stage's own sensor that launches or watches one names it from here,
so that no stage imports the layer that assembles them."""

NIGHTLY_JOB = "nightly_platform_job"
REANALYSIS_JOB = "reanalysis_job"
CATALOG_JOB = "catalog_job"
REPORT_JOB = "report_job"
MAINTENANCE_JOB = "lake_maintenance_job"
DIGEST_JOB = "digest_job"

# The tags a run's platform is found by: a partition's (Dagster's own), a range run's (ours).
PLATFORM_TAGS = ("dagster/partition/platform", "visibility/platform")
TASK_TAG = "visibility/task"  # the event-driven task a run collects
