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
    FROM {{ run_rows('int_brand_daily') }}
),
rated AS (  -- the weighted mention rate's interval (macros.sql), at the effective sample size
    SELECT *, wilson(weighted_mentions / weight_sum * effective_answers, effective_answers) AS weighted_mention
    FROM daily
),
lineage AS (
    SELECT date, platform,
           max(config_version) AS config_version,
           max(analyzer_version) AS analyzer_version,
           max(samples_run_id) AS samples_run_id
    FROM {{ run_rows('stg_samples') }}
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
    named_unknown_answers,  -- naming it only to say nothing is known of it: counted apart (clean/unknown.py)
    known_mentioned_answers,
    -- The shares of the metric catalog (metrics.yml), each its numerator over its denominator.
    {{ share_with_interval('mention_rate') }},
    {{ share('share_of_voice') }},
    weighted_mention.rate AS weighted_mention_rate,
    weighted_mention.low AS weighted_mention_rate_low,
    weighted_mention.high AS weighted_mention_rate_high,
    CASE WHEN category_weighted_mentions > 0 THEN weighted_mentions / category_weighted_mentions END
        AS weighted_share_of_voice,
    effective_answers,
    avg_list_rank,
    {{ share('top1_rate') }},
    {{ share('top3_rate') }},
    {{ share('recommend_rate') }},
    {{ share('negative_rate') }},
    -- How the answers that name the brand speak of it, over those answers (int_brand_results).
    {{ share_with_interval('positive_rate') }},
    {{ share_with_interval('negative_sentiment_rate') }},
    -- Whose labels the sentiment rates count: the judge's (judge.yaml), the analyzer's own, reviewers', or a mix.
    CASE WHEN known_mentioned_answers = 0 THEN NULL
         WHEN judge_labelled_answers = known_mentioned_answers THEN 'judge'
         WHEN review_labelled_answers = known_mentioned_answers THEN 'review'
         WHEN judge_labelled_answers = 0 AND review_labelled_answers = 0 THEN 'analyzer'
         ELSE 'mixed' END AS sentiment_source,
    {{ share('citation_rate') }},
    {{ share('own_domain_citation_rate') }},
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
    review_labelled_answers,
    reviewed_answers,  -- whose labels an analyst reviewed: the figures count the reviewer's labels
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
