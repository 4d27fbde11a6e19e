-- kind: incremental
-- grain: date, platform, category, brand
-- The metrics per date x platform x category x brand (docs/metrics.md), over valid answers, with 95% Wilson intervals.
-- share_of_voice compares a brand with the other tracked brands of its category.
-- The demand-weighted rates count each question by its weight (questions.yaml): the weighted
-- mention rate is the weight-averaged mention rate of the questions, its interval a Wilson
-- interval at Kish's effective sample size (weight_sum² / weight_sq_sum), which is the answer
-- count when every weight is equal (tests/measure/test_weighted_metrics.py checks its coverage).
WITH daily AS (
    SELECT *, CAST(sum(mentioned_answers) OVER (PARTITION BY date, platform, category) AS BIGINT) AS category_mentions,
           sum(weighted_mentions) OVER (PARTITION BY date, platform, category) AS category_weighted_mentions,
           CASE WHEN weight_sq_sum > 0 THEN weight_sum * weight_sum / weight_sq_sum END AS effective_answers
    FROM {{ ref('int_brand_daily') }}
    SEMI JOIN {{ run_partitions }} USING (date, platform)
),
rated AS (  -- each rate with its interval (macros.sql): mention over valid answers, sentiment over mentions
    SELECT *,
           wilson(mentioned_answers, valid_answers) AS mention,
           wilson(positive_sentiment_answers, mentioned_answers) AS positive,
           wilson(negative_sentiment_answers, mentioned_answers) AS negative_sentiment,
           wilson(weighted_mentions / weight_sum * effective_answers, effective_answers) AS weighted_mention
    FROM daily
),
lineage AS (
    SELECT date, platform,
           max(config_version) AS config_version,
           max(analyzer_version) AS analyzer_version,
           max(samples_run_id) AS samples_run_id
    FROM {{ ref('stg_samples') }}
    SEMI JOIN {{ run_partitions }} USING (date, platform)
    GROUP BY date, platform
)
SELECT
    date,
    platform,
    category,
    brand,
    answers,
    valid_answers,
    mentioned_answers,
    mention.rate AS mention_rate,
    mention.low AS mention_rate_low,
    mention.high AS mention_rate_high,
    CASE WHEN category_mentions > 0 THEN mentioned_answers / category_mentions END AS share_of_voice,
    weighted_mention.rate AS weighted_mention_rate,
    weighted_mention.low AS weighted_mention_rate_low,
    weighted_mention.high AS weighted_mention_rate_high,
    CASE WHEN category_weighted_mentions > 0 THEN weighted_mentions / category_weighted_mentions END
        AS weighted_share_of_voice,
    effective_answers,
    avg_list_rank,
    CASE WHEN valid_answers > 0 THEN top1_answers / valid_answers END AS top1_rate,
    CASE WHEN valid_answers > 0 THEN top3_answers / valid_answers END AS top3_rate,
    CASE WHEN valid_answers > 0 THEN recommended_answers / valid_answers END AS recommend_rate,
    CASE WHEN valid_answers > 0 THEN negative_answers / valid_answers END AS negative_rate,
    -- How the answers that name the brand speak of it, over those answers (int_brand_results).
    positive.rate AS positive_rate,
    positive.low AS positive_rate_low,
    positive.high AS positive_rate_high,
    negative_sentiment.rate AS negative_sentiment_rate,
    negative_sentiment.low AS negative_sentiment_rate_low,
    negative_sentiment.high AS negative_sentiment_rate_high,
    -- Whose labels the sentiment rates count: the judge's (judge.yaml), the lexicon's, or both.
    CASE WHEN mentioned_answers = 0 THEN NULL
         WHEN judge_labelled_answers = mentioned_answers THEN 'judge'
         WHEN judge_labelled_answers = 0 THEN 'lexicon'
         ELSE 'mixed' END AS sentiment_source,
    CASE WHEN mentioned_answers > 0 THEN cited_answers / mentioned_answers END AS citation_rate,
    CASE WHEN mentioned_answers > 0 THEN own_domain_cited_answers / mentioned_answers END AS own_domain_citation_rate,
    -- The counts behind the rates: a period or a set of platforms pools them (the workspace),
    -- never the rates themselves.
    category_mentions,
    listed_answers,
    top1_answers,
    top3_answers,
    recommended_answers,
    negative_answers,
    positive_sentiment_answers,
    negative_sentiment_answers,
    judge_labelled_answers,
    cited_answers,
    own_domain_cited_answers,
    list_rank_sum_sq,
    weight_sum,
    weighted_mentions,
    weight_sq_sum,
    l.config_version,
    l.analyzer_version,
    l.samples_run_id,
    $run_id AS run_id
FROM rated
JOIN lineage AS l USING (date, platform)
