-- kind: view
-- grain: date, platform, fault_class
-- Failures split by whose they are, per day and platform: the clear alerts of each class
-- (visibility_alerts: brand, source, rule) and the faults that are no rate alert
-- (fault_events: failed runs, replay diffs, webhooks that refused), with their kinds.
-- platform is '' for a fault that is no one platform's (a webhook).
WITH alerts AS (
    SELECT date, platform, fault_class, 1 AS alert, 0 AS fault, kind
    FROM {{ ref('fct_visibility_alerts') }}
    WHERE decision = 'alert'
),
faults AS (
    SELECT date, coalesce(platform, '') AS platform, fault_class, 0 AS alert, 1 AS fault, kind
    FROM {{ ref('stg_fault_events') }}
)
SELECT
    date,
    platform,
    fault_class,
    sum(alert)::INTEGER AS alerts,
    sum(fault)::INTEGER AS faults,
    list(DISTINCT kind ORDER BY kind) AS kinds
FROM (SELECT * FROM alerts UNION ALL SELECT * FROM faults)
GROUP BY ALL
