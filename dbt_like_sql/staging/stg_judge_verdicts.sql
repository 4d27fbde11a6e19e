-- kind: view
-- grain: request_key, brand
-- The judge model's label of each brand an answer names (judge.yaml); none without a judge.
SELECT
    request_key,
    date,
    platform,
    brand,
    sentiment AS judge_sentiment,
    role AS judge_role,
    claims AS judge_claims,
    judge_platform,
    judge_model,
    prompt_version AS judge_prompt_version
FROM {{ ref('judge_verdicts') }}
