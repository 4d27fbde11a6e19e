-- kind: ephemeral
-- grain: request_key
-- One row per answer as collected, canary prompts included: its outcome, the model and
-- deployment that answered, its usage, searches and cost.
SELECT
    request_key,
    date,
    platform,
    category,
    outcome,
    response_model,
    system_fingerprint,
    answer_text,
    received_at,
    latency_ms,
    prompt_tokens,
    cached_tokens,
    completion_tokens,
    reasoning_tokens,
    search_used,
    search_count,
    search_queries,
    cost,
    currency
FROM {{ ref('raw_ai_responses') }}
