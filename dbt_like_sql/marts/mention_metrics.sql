-- kind: view
-- grain: date, platform, category, brand
-- The metrics under the name users query (CONTRACTS section 2).
SELECT * FROM {{ ref('fct_mention_metrics') }}
