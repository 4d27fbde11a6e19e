-- kind: incremental
-- grain: date, platform, reason
-- Answers per platform and day by validity: a spike in refusals or errors is a signal.
WITH counted AS (
    SELECT date, platform, coalesce(invalid_reason, 'valid') AS reason, count(*) AS answers
    FROM {{ ref('stg_samples') }}
    SEMI JOIN {{ run_partitions }} USING (date, platform)
    GROUP BY ALL
)
SELECT
    date,
    platform,
    reason,
    answers,
    answers / sum(answers) OVER (PARTITION BY date, platform) AS share,
    $run_id AS run_id
FROM counted
