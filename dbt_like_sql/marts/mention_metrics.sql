-- kind: view
-- grain: date, platform, category, brand
-- The metrics under the name users query. Days built before the analyzer told the brands named
-- only to say nothing is known of them (clean/unknown.py) had none: their mentions all count
-- toward the sentiment rates, as they did then; days built before reviews had none reviewed.
SELECT * REPLACE (coalesce(named_unknown_answers, 0) AS named_unknown_answers,
                  coalesce(known_mentioned_answers, mentioned_answers) AS known_mentioned_answers,
                  coalesce(reviewed_answers, 0) AS reviewed_answers,
                  coalesce(review_labelled_answers, 0) AS review_labelled_answers)
FROM {{ ref('fct_mention_metrics') }}
