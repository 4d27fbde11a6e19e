"""The names of the pipeline's jobs. The jobs themselves are defined once, in
operate/automation.py; a stage's own sensor that launches or watches one names it from here,
so that no stage imports the layer that assembles them."""

NIGHTLY_JOB = "nightly_platform_job"
REANALYSIS_JOB = "reanalysis_job"
CATALOG_JOB = "catalog_job"
REPORT_JOB = "report_job"
MAINTENANCE_JOB = "lake_maintenance_job"
