-- kind: ephemeral
-- grain: request_key, attempt
-- One row per HTTP attempt of a request.
SELECT
    request_key,
    attempt,
    run_id,
    date,
    platform,
    started_at,
    finished_at,
    http_status,
    error_class
FROM {{ ref('http_attempts') }}
