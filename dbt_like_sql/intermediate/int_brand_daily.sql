-- kind: incremental
-- grain: date, platform, category, brand
-- Counts per partition and brand over the answers to questions of the brand's category; the
-- sentiment counts take the judge's label where it gave one (int_brand_results). Demand
-- weighting: a question's weight is shared by its valid answers of the day (answer_weight), so
-- the weighted mention rate is the weight-averaged rate of the questions (each question one
-- stratum), and the squared weights give its effective sample size (fct_mention_metrics).
WITH weighted AS (
    SELECT *,
           CASE WHEN valid THEN question_weight / count(*) FILTER (WHERE valid) OVER (
               PARTITION BY date, platform, brand, question_id) END AS answer_weight
    FROM {{ run_rows('int_brand_results') }}
)
SELECT
    date,
    platform,
    category,
    brand,
    count(*) AS answers,
    count(*) FILTER (WHERE valid) AS valid_answers,
    count(*) FILTER (WHERE mentioned) AS mentioned_answers,
    count(*) FILTER (WHERE mentioned AND named_unknown) AS named_unknown_answers,
    count(*) FILTER (WHERE mentioned AND NOT named_unknown) AS known_mentioned_answers,
    count(*) FILTER (WHERE list_rank IS NOT NULL) AS listed_answers,
    avg(list_rank) AS avg_list_rank,
    CAST(sum(list_rank * list_rank) AS BIGINT) AS list_rank_sum_sq,  -- with avg_list_rank, a period's rank variance
    count(*) FILTER (WHERE list_rank = 1) AS top1_answers,
    count(*) FILTER (WHERE list_rank <= 3) AS top3_answers,
    count(*) FILTER (WHERE recommended) AS recommended_answers,
    count(*) FILTER (WHERE recommended = false) AS negative_answers,
    count(*) FILTER (WHERE mentioned AND sentiment = 'positive') AS positive_sentiment_answers,
    count(*) FILTER (WHERE mentioned AND sentiment = 'negative') AS negative_sentiment_answers,
    count(*) FILTER (WHERE mentioned AND sentiment_source = 'judge') AS judge_labelled_answers,
    count(*) FILTER (WHERE mentioned AND sentiment_source = 'review') AS review_labelled_answers,
    count(*) FILTER (WHERE reviewed) AS reviewed_answers,
    count(*) FILTER (WHERE mentioned AND has_citation) AS cited_answers,
    count(*) FILTER (WHERE mentioned AND cites_own_domain) AS own_domain_cited_answers,
    coalesce(sum(answer_weight), 0) AS weight_sum,
    coalesce(sum(answer_weight) FILTER (WHERE mentioned), 0) AS weighted_mentions,
    coalesce(sum(answer_weight * answer_weight), 0) AS weight_sq_sum
FROM weighted
GROUP BY date, platform, category, brand
