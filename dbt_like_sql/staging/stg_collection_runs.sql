-- kind: ephemeral
-- grain: run_id, date, platform
-- One row per collection of a partition by a run.
SELECT
    run_id,
    date,
    platform,
    skipped_done
FROM {{ ref('collection_runs') }}
