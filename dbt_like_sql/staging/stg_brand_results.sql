-- kind: view
-- grain: request_key, brand
-- One row per answer and brand of its category, with the answer's validity and citations.
SELECT
    r.request_key,
    r.date,
    r.platform,
    r.category,
    r.brand,
    s.valid,
    r.mentioned,
    r.mention_count,
    r.first_mention_order,
    r.list_rank,
    r.recommended,
    r.cites_own_domain,
    s.has_citation
FROM {{ ref('sample_brand_results') }} AS r
JOIN {{ ref('stg_samples') }} AS s USING (request_key)
