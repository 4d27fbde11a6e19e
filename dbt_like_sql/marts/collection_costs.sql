-- kind: incremental
-- grain: date, platform
-- What collecting each platform's day took: requests, HTTP attempts, tokens, searches and cost
-- (from each answer's usage and prices.yaml; null where no price covers the platform's model).
WITH answers AS (
    SELECT
        date,
        platform,
        count(*) AS answers,
        count(*) FILTER (outcome = 'moderated') AS moderated,
        count(*) FILTER (outcome = 'truncated') AS truncated,
        sum(prompt_tokens) AS prompt_tokens,
        sum(cached_tokens) AS cached_tokens,
        sum(completion_tokens) AS completion_tokens,
        sum(reasoning_tokens) AS reasoning_tokens,
        sum(coalesce(search_count, CASE WHEN search_used THEN 1 ELSE 0 END)) AS searches,
        count(*) FILTER (search_used) AS answers_with_search,
        sum(cost) AS cost,
        count(cost) AS costed_answers,
        max(currency) AS currency
    FROM {{ ref('raw_ai_responses') }}
    SEMI JOIN {{ run_partitions }} USING (date, platform)
    GROUP BY ALL
),
requests AS (
    SELECT date, platform, count(*) AS requests, sum(attempts) AS http_attempts
    FROM {{ ref('collection_requests') }}
    SEMI JOIN {{ run_partitions }} USING (date, platform)
    GROUP BY ALL
)
SELECT
    a.date,
    a.platform,
    coalesce(r.requests, a.answers) AS requests,
    r.http_attempts,
    a.* EXCLUDE (date, platform),
    $run_id AS run_id
FROM answers AS a
LEFT JOIN requests AS r USING (date, platform)
