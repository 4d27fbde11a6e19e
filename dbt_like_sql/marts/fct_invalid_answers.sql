-- kind: incremental
-- grain: date, platform, reason
-- Answers per platform and day by validity, with the share's 95% Wilson interval: a spike in
-- refusals, errors or moderation is a signal. `moderated` (the platform's content moderation
-- stopped the prompt) and `truncated` (cut off at the length limit) come from collection.
WITH counted AS (
    SELECT date, platform, coalesce(invalid_reason, 'valid') AS reason, count(*) AS answers
    FROM {{ run_rows('stg_samples') }}
    GROUP BY ALL
),
totals AS (
    SELECT *, sum(answers) OVER (PARTITION BY date, platform) AS all_answers FROM counted
),
shared AS (
    SELECT *, wilson(answers, all_answers) AS reason_share FROM totals
)
SELECT
    date,
    platform,
    reason,
    answers,
    reason_share.rate AS share,
    reason_share.low AS share_low,
    reason_share.high AS share_high,
    $run_id AS run_id
FROM shared
