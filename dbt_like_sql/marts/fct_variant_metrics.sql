-- kind: incremental
-- grain: date, platform, category, brand, variant
-- The mention metrics per variant of the questions (questions.yaml variants: a persona, a
-- region, a language; 'base' is each question's own text), over each variant's valid answers,
-- with 95% Wilson intervals: how the answers change with who asks. fct_mention_metrics pools
-- the variants (every answer of the category); a question without variants is 'base' only.
WITH daily AS (
    SELECT date, platform, category, brand, variant,
           count(*) AS answers,
           count(*) FILTER (WHERE valid) AS valid_answers,
           count(*) FILTER (WHERE mentioned) AS mentioned_answers,
           count(*) FILTER (WHERE mentioned AND NOT named_unknown) AS known_mentioned_answers,
           count(*) FILTER (WHERE list_rank IS NOT NULL) AS listed_answers,
           avg(list_rank) AS avg_list_rank,
           count(*) FILTER (WHERE list_rank = 1) AS top1_answers,
           count(*) FILTER (WHERE recommended) AS recommended_answers,
           count(*) FILTER (WHERE mentioned AND sentiment = 'positive') AS positive_sentiment_answers
    FROM {{ run_rows('int_brand_results') }}
    GROUP BY ALL
),
rated AS (
    SELECT *,
           CAST(sum(mentioned_answers) OVER (PARTITION BY date, platform, category, variant) AS BIGINT)
               AS category_mentions
    FROM daily
)
SELECT
    date,
    platform,
    category,
    brand,
    variant,
    answers,
    valid_answers,
    mentioned_answers,
    {{ share_with_interval('mention_rate') }},  -- the shares of the metric catalog (metrics.yml)
    {{ share('share_of_voice') }},
    avg_list_rank,
    {{ share('top1_rate') }},
    {{ share('recommend_rate') }},
    {{ share('positive_rate') }},
    category_mentions,
    listed_answers,
    top1_answers,
    recommended_answers,
    positive_sentiment_answers,
    $run_id AS run_id
FROM rated
