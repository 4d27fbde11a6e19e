-- kind: view
-- grain: request_key, brand
-- One row per answer and brand of its category. The answer's validity and citation flag are
-- carried on each row, so partition queries read one table instead of joining two.
SELECT
    request_key,
    date,
    platform,
    category,
    brand,
    valid,
    mentioned,
    mention_count,
    first_mention_order,
    list_rank,
    recommended,
    sentiment,
    coalesce(named_unknown, false) AS named_unknown,  -- null in rows cleaned before the analyzer had it
    cites_own_domain,
    has_citation
FROM {{ ref('sample_brand_results') }}
