-- kind: view
-- grain: request_key, brand
-- Each answer and brand an analyst reviewed (the workspace's Review view): the latest review's
-- labels, which replace the machine's in the metrics (int_brand_results).
SELECT
    request_key,
    date,
    platform,
    brand,
    mentioned AS reviewed_mentioned,
    mention_count AS reviewed_mention_count,
    list_rank AS reviewed_list_rank,
    recommended AS reviewed_recommended,
    sentiment AS reviewed_sentiment,
    reviewer,
    reviewers,
    reviewed_at
FROM {{ ref('label_reviews') }}
