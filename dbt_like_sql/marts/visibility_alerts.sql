-- kind: view
-- grain: date, platform, kind, category, subject
-- The alerts under the name users query (CONTRACTS section 2).
SELECT * FROM {{ ref('fct_visibility_alerts') }}
