-- kind: incremental
-- grain: date, platform, brand, kind, phrase
-- Per partition, what the answers say about each brand: the claims the judge quoted (kind
-- 'claim') and the lexicon's cue words (kind 'cue'), each with the answers that carry it.
-- brand_claims sums its weeks from these rows, so a page reading it never reads every alias
-- match of the history.
WITH phrases AS (
    SELECT platform, date, brand, request_key, 'claim' AS kind, unnest(judge_claims) AS phrase
    FROM {{ ref('stg_judge_verdicts') }}
    SEMI JOIN {{ run_partitions }} USING (date, platform)
    UNION ALL
    SELECT platform, date, brand, request_key, 'cue' AS kind, unnest(sentiment_cues) AS phrase
    FROM {{ ref('stg_mention_cues') }}
    SEMI JOIN {{ run_partitions }} USING (date, platform)
)
SELECT date, platform, brand, kind, phrase, count(DISTINCT request_key) AS answers
FROM phrases
GROUP BY ALL
