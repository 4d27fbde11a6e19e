-- kind: view
-- grain: request_key, brand
-- Each answer and brand with the labels the metrics count: an analyst's where one reviewed it
-- (label_reviews), else the analyzer's, with the sentiment the judge's where it labelled the brand
-- (judge.yaml), the analyzer's own elsewhere, and whose it is; with the answer's question and its weight.
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
    -- A reviewed label replaces the machine's (the workspace's Review view); `reviewed` says so.
    rv.request_key IS NOT NULL AS reviewed,
    coalesce(rv.reviewed_mentioned, b.mentioned) AS mentioned,
    CASE WHEN rv.request_key IS NULL THEN b.mention_count ELSE rv.reviewed_mention_count END AS mention_count,
    CASE WHEN rv.request_key IS NULL OR rv.reviewed_mentioned = b.mentioned THEN b.first_mention_order END
        AS first_mention_order,
    CASE WHEN rv.request_key IS NULL THEN b.list_rank ELSE rv.reviewed_list_rank END AS list_rank,
    CASE WHEN rv.request_key IS NULL THEN b.recommended ELSE rv.reviewed_recommended END AS recommended,
    b.cites_own_domain,
    b.has_citation,
    -- A reviewer who finds it named but gives it no tone says nothing is known of it.
    CASE WHEN rv.request_key IS NULL THEN b.named_unknown
         ELSE rv.reviewed_mentioned AND rv.reviewed_sentiment IS NULL END AS named_unknown,
    -- A brand named only to say nothing is known of it has no tone, whoever labels it.
    CASE WHEN rv.request_key IS NOT NULL THEN rv.reviewed_sentiment
         WHEN b.mentioned AND NOT b.named_unknown THEN coalesce(v.judge_sentiment, b.sentiment) END AS sentiment,
    CASE WHEN rv.request_key IS NOT NULL THEN (CASE WHEN rv.reviewed_sentiment IS NOT NULL THEN 'review' END)
         WHEN NOT b.mentioned OR b.named_unknown THEN NULL WHEN v.judge_sentiment IS NOT NULL THEN 'judge'
         ELSE 'analyzer' END AS sentiment_source,
    b.sentiment AS lexicon_sentiment,
    v.judge_sentiment,
    v.judge_role,
    v.judge_model,
    v.judge_prompt_version
FROM {{ ref('stg_brand_results') }} AS b
JOIN {{ ref('stg_samples') }} AS s USING (request_key, date, platform)
LEFT JOIN {{ ref('stg_judge_verdicts') }} AS v USING (request_key, date, platform, brand)
LEFT JOIN {{ ref('stg_label_reviews') }} AS rv USING (request_key, date, platform, brand)
