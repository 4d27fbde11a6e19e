-- kind: ephemeral
-- grain: fault_id
-- One row per fault that is no rate alert: a failed run, a replay diff, a webhook that refused.
SELECT
    fault_id,
    date,
    platform,
    kind,
    fault_class,
    subject,
    detail,
    run_id,
    occurred_at
FROM {{ ref('fault_events') }}
