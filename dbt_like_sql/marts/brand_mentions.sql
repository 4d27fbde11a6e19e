-- kind: incremental
-- grain: request_key, brand
-- The tracked brands each answer names: the rows of int_brand_results where the brand is
-- named, with the sentiment the metrics count. int_brand_results holds a row per answer and
-- brand of its category, and at 1,000 brands a category about one in a hundred names the
-- brand: the workspace's questions, sources and answers pages read these rows instead, and
-- take the answers that name no brand from stg_samples.
SELECT
    request_key,
    date,
    platform,
    category,
    brand,
    question_id,
    round,
    valid,
    mention_count,
    first_mention_order,
    list_rank,
    recommended,
    cites_own_domain,
    sentiment,
    sentiment_source
FROM {{ run_rows('int_brand_results') }}
WHERE mentioned
