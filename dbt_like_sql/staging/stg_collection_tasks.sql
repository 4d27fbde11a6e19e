-- kind: ephemeral
-- grain: task_id
-- One row per event-driven task, with when it was planned.
SELECT
    task_id,
    date,
    platform,
    created_at
FROM {{ ref('collection_tasks') }}
