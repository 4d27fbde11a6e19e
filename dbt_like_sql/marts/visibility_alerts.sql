-- kind: view
-- grain: date, platform, kind, category, subject
-- The alerts under the name users query.
SELECT * FROM {{ ref('fct_visibility_alerts') }}
