-- kind: view
-- grain: platform, week, judge_model, judge_prompt_version
-- How far the judge model and the lexicon agree, per platform and week, on the mentions both
-- labelled: the share they agree on, the share chance alone would give (from each one's label
-- frequencies), and Cohen's kappa, (agreement - chance) / (1 - chance): 1 is full agreement,
-- 0 no more than chance. It says how much to trust a switch from one method to the other.
-- Summed from each partition's pairs of labels (int_sentiment_pairs).
WITH pairs AS (
    SELECT platform, CAST(date_trunc('week', date) AS DATE) AS week, judge_model, judge_prompt_version,
           judge_sentiment, lexicon_sentiment, mentions
    FROM {{ ref('int_sentiment_pairs') }}
),
totals AS (
    SELECT platform, week, judge_model, judge_prompt_version, sum(mentions) AS labelled_by_both,
           coalesce(sum(mentions) FILTER (WHERE judge_sentiment = lexicon_sentiment), 0) AS agreed
    FROM pairs
    GROUP BY ALL
),
margins AS (  -- per label, how often each method gives it
    SELECT platform, week, judge_model, judge_prompt_version, label,
           coalesce(sum(mentions) FILTER (WHERE judge_sentiment = label), 0) AS by_judge,
           coalesce(sum(mentions) FILTER (WHERE lexicon_sentiment = label), 0) AS by_lexicon
    FROM pairs CROSS JOIN (VALUES ('positive'), ('neutral'), ('negative')) AS labels (label)
    GROUP BY ALL
),
chance AS (
    SELECT m.platform, m.week, m.judge_model, m.judge_prompt_version,
           sum(m.by_judge * m.by_lexicon) / (max(t.labelled_by_both) * max(t.labelled_by_both)) AS chance_agreement
    FROM margins AS m
    JOIN totals AS t USING (platform, week, judge_model, judge_prompt_version)
    GROUP BY ALL
)
SELECT
    platform,
    week,
    judge_model,
    judge_prompt_version,
    labelled_by_both,
    agreed,
    agreed / labelled_by_both AS agreement,
    chance_agreement,
    CASE WHEN chance_agreement < 1 THEN (agreed / labelled_by_both - chance_agreement) / (1 - chance_agreement)
    END AS kappa
FROM totals
JOIN chance USING (platform, week, judge_model, judge_prompt_version)
