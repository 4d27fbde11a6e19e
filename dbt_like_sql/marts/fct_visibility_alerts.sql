-- kind: incremental
-- grain: date, platform, kind, category, subject
-- A brand's mention rate, or a platform's refusal, error or moderation share, against its trailing
-- baseline (baseline_days(), macros.sql), when the two-proportion test keeps the change
-- (change_kept) and the baseline holds at least 3 days. q_value is the Benjamini-Hochberg
-- adjusted p over all of the platform's tests that day (dozens of brands are tested at once).
-- decision: 'alert' when the change is clear (change_is_clear; it is notified); 'borderline'
-- otherwise: more samples of that day can settle it (events/, extra sampling).
-- model_changed: the platform changed its model that day (fct_model_changes), so a jump is
-- likely the model's; the flagged signals themselves are rows of kind 'model_change'.
-- fault_class says whose the change is (core/faults.py): brand (a mention rate: the brand
-- team's news), source (the platform refusing, erroring or moderating more) or rule (the
-- platform's model changed under the analyzer).
WITH mention_today AS (
    SELECT date, platform, category, brand AS subject, mentioned_answers AS x1, valid_answers AS n1
    FROM {{ run_rows('fct_mention_metrics') }}
    WHERE valid_answers > 0
),
mention_baseline AS (
    SELECT r.date, r.platform, m.category, m.brand AS subject,
           sum(m.mentioned_answers) AS x0, sum(m.valid_answers) AS n0, count(DISTINCT m.date) AS baseline_days
    FROM {{ run_partitions }} AS r
    JOIN {{ ref('fct_mention_metrics') }} AS m
      ON m.platform = r.platform AND m.date BETWEEN r.date - to_days(baseline_days()) AND r.date - INTERVAL 1 DAY
    GROUP BY ALL
),
invalid_today AS (
    SELECT date, platform, reason, answers, sum(answers) OVER (PARTITION BY date, platform) AS total
    FROM {{ run_rows('fct_invalid_answers') }}
),
invalid_window AS (
    SELECT r.date, r.platform, i.reason, i.answers, i.date AS day
    FROM {{ run_partitions }} AS r
    JOIN {{ ref('fct_invalid_answers') }} AS i
      ON i.platform = r.platform AND i.date BETWEEN r.date - to_days(baseline_days()) AND r.date - INTERVAL 1 DAY
),
invalid_baseline AS (
    SELECT date, platform, reason, sum(answers) AS answers
    FROM invalid_window
    GROUP BY ALL
),
invalid_baseline_total AS (
    SELECT date, platform, sum(answers) AS total, count(DISTINCT day) AS baseline_days
    FROM invalid_window
    GROUP BY ALL
),
shares AS (
    SELECT t.date, t.platform, NULL AS category, t.reason AS subject, t.answers AS x1, t.total AS n1,
           coalesce(b.answers, 0) AS x0, bt.total AS n0, bt.baseline_days
    FROM invalid_today AS t
    JOIN invalid_baseline_total AS bt USING (date, platform)
    LEFT JOIN invalid_baseline AS b USING (date, platform, reason)
    WHERE t.reason IN ('refusal', 'error', 'moderated')
),
candidates AS (
    SELECT 'mention_rate' AS kind, t.date, t.platform, t.category, t.subject, t.x1, t.n1, b.x0, b.n0, b.baseline_days
    FROM mention_today AS t
    JOIN mention_baseline AS b USING (date, platform, category, subject)
    UNION ALL
    SELECT CASE subject WHEN 'moderated' THEN 'moderation' ELSE subject END || '_share', date, platform,
           category, subject, x1, n1, x0, n0, baseline_days
    FROM shares
),
scored AS (
    SELECT *, two_proportion_z(x1, n1, x0, n0) AS z
    FROM candidates
    WHERE n0 > 0 AND baseline_days >= 3
),
tested AS (
    SELECT *, normal_two_sided_p(z) AS p
    FROM scored
),
ranked AS (
    SELECT *, row_number() OVER (PARTITION BY date, platform ORDER BY p, kind, subject) AS p_rank,
           count(*) OVER (PARTITION BY date, platform) AS tests
    FROM tested
),
adjusted AS (
    SELECT *, least(1.0, min(p * tests / p_rank) OVER (
               PARTITION BY date, platform ORDER BY p_rank DESC ROWS UNBOUNDED PRECEDING)) AS q_value
    FROM ranked
),
model_days AS (
    SELECT date, platform, bool_or(flagged) AS model_changed
    FROM {{ run_rows('fct_model_changes') }}
    GROUP BY ALL
),
changes AS (
SELECT
    date,
    platform,
    kind,
    category,
    subject,
    CASE WHEN z > 0 THEN 'up' ELSE 'down' END AS direction,
    unnest(against_baseline(x1, n1, x0, n0)),  -- rate, baseline_rate and their intervals (macros.sql)
    x1 / n1 - x0 / n0 AS change,
    z,
    p AS p_value,
    q_value,
    tests AS tests_that_day,
    CASE WHEN change_is_clear(p, q_value) THEN 'alert' ELSE 'borderline' END AS decision,  -- macros.sql
    n1 AS answers,
    n0 AS baseline_answers,
    baseline_days,
    now() AS stored_at,
    $run_id AS run_id
FROM adjusted
WHERE change_kept(p)
)

SELECT c.*, coalesce(m.model_changed, false) AS model_changed,
       CASE c.kind WHEN 'mention_rate' THEN 'brand' ELSE 'source' END AS fault_class
FROM changes AS c
LEFT JOIN model_days AS m USING (date, platform)
UNION ALL
-- The day a platform changed its model is itself an alert: a metric jump that day is the model's.
SELECT
    date,
    platform,
    'model_change' AS kind,
    NULL AS category,
    signal || coalesce(': ' || value_today, '') AS subject,
    CASE WHEN rate >= baseline_rate THEN 'up' ELSE 'down' END AS direction,
    rate, rate_low, rate_high, baseline_rate, baseline_low, baseline_high,
    rate - baseline_rate AS change,
    z,
    p_value,
    NULL AS q_value,
    NULL AS tests_that_day,
    'alert' AS decision,
    n1 AS answers,
    n0 AS baseline_answers,
    baseline_days,
    now() AS stored_at,
    $run_id AS run_id,
    true AS model_changed,
    'rule' AS fault_class
FROM {{ run_rows('fct_model_changes') }}
WHERE flagged
