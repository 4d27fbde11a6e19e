-- kind: view
-- grain: date, platform, category, brand
-- The metrics under the name users query.
SELECT * FROM {{ ref('fct_mention_metrics') }}
