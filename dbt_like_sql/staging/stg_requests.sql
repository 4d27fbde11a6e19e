-- kind: ephemeral
-- grain: request_key
-- One row per request of a partition's collection: its final state and HTTP attempts.
SELECT
    request_key,
    date,
    platform,
    task_id,
    state,
    attempts
FROM {{ ref('collection_requests') }}
