-- kind: incremental
-- grain: date, platform, judge_model, judge_prompt_version, judge_sentiment, lexicon_sentiment
-- Per partition, the mentions both the judge and the lexicon labelled, counted by the pair of
-- labels they gave: what sentiment_agreement's weekly agreement and kappa are summed from, so
-- that a page reading them never reads every brand result of the history.
SELECT
    date,
    platform,
    judge_model,
    judge_prompt_version,
    judge_sentiment,
    lexicon_sentiment,
    count(*) AS mentions
FROM {{ run_rows('int_brand_results') }}
WHERE mentioned AND valid AND judge_sentiment IS NOT NULL AND lexicon_sentiment IS NOT NULL
GROUP BY ALL
