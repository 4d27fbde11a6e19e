-- kind: incremental
-- grain: date, platform
-- What collecting each platform's day took: requests, HTTP attempts, tokens, searches and cost
-- (from each answer's usage and prices.yaml; null where no price covers the platform's model).
-- A partition without answers has no row; one whose requests were not kept counts its answers.
SELECT
    date,
    platform,
    coalesce(requests, answers) AS requests,
    http_attempts,
    answers,
    moderated,
    truncated,
    prompt_tokens,
    cached_tokens,
    completion_tokens,
    reasoning_tokens,
    searches,
    answers_with_search,
    cost,
    costed_answers,
    currency,
    $run_id AS run_id
FROM {{ run_rows('int_partition_requests') }}
WHERE answers IS NOT NULL
