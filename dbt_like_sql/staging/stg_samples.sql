-- kind: view
-- grain: request_key
-- One row per cleaned answer, with the question's category and its validity.
SELECT
    request_key,
    date,
    platform,
    question_id,
    coalesce(question_weight, 1.0) AS question_weight,  -- answers cleaned before weights weigh 1
    category,
    round,
    coalesce(variant, 'base') AS variant,  -- 'base': the question's own text
    valid,
    invalid_reason,
    has_citation,
    citations,
    analyzer_version,
    config_version,
    run_id AS samples_run_id
FROM {{ ref('cleaned_samples') }}
-- Canary answers (category canary) are read by fct_model_changes (through stg_responses and
-- stg_all_samples), never by the brand metrics.
WHERE category <> 'canary'
