-- kind: view
-- grain: request_key, brand
-- Each answer and brand with the sentiment the metrics count: the judge's where it labelled the
-- brand (judge.yaml), the lexicon's elsewhere, and which of the two it is; with the answer's
-- question and its weight.
SELECT
    b.request_key,
    b.date,
    b.platform,
    b.category,
    b.brand,
    s.question_id,
    s.round,
    s.question_weight,
    s.variant,
    b.valid,
    b.mentioned,
    b.mention_count,
    b.first_mention_order,
    b.list_rank,
    b.recommended,
    b.cites_own_domain,
    b.has_citation,
    b.named_unknown,
    -- A brand named only to say nothing is known of it has no tone, whoever labels it.
    CASE WHEN b.mentioned AND NOT b.named_unknown THEN coalesce(v.judge_sentiment, b.sentiment) END AS sentiment,
    CASE WHEN NOT b.mentioned OR b.named_unknown THEN NULL WHEN v.judge_sentiment IS NOT NULL THEN 'judge'
         ELSE 'lexicon' END AS sentiment_source,
    b.sentiment AS lexicon_sentiment,
    v.judge_sentiment,
    v.judge_role,
    v.judge_model,
    v.judge_prompt_version
FROM {{ ref('stg_brand_results') }} AS b
JOIN {{ ref('stg_samples') }} AS s USING (request_key, date, platform)
LEFT JOIN {{ ref('stg_judge_verdicts') }} AS v USING (request_key, date, platform, brand)
