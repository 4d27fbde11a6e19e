-- kind: incremental
-- grain: date, platform, signal
-- The model-change canary: did the platform change its model on this day? Five signals, each
-- against the platform's trailing 7 days:
--   model, fingerprint  most of the day's answers report a model (system_fingerprint) that no
--                       answer of the week before reported;
--   canary_length       the canary prompts' answers longer than the week's median length;
--   canary_lists        canary answers that use a list (cleaned_samples.option_list_kind: for a
--                       canary prompt, which offers no brand, the kind of its first list, table,
--                       heading run or run of bold lines);
--   canary_refusals     canary answers refused;
-- the canary signals flag at p < 0.001 (two-proportion test, at least 3 baseline days), strict
-- because five signals are tested on every platform every day, and only on the first day of a
-- shift (the day before was in line with its own week): a lasting change is one change, not a
-- week of them. x1/n1 today, x0/n0 the week.
WITH anchors AS (
    SELECT date, platform FROM {{ run_partitions }}
    UNION
    SELECT CAST(date - 1 AS DATE), platform FROM {{ run_partitions }}
),
window_days AS (  -- each anchor's day and the 7 before it, as rows: an equality join, whose
    -- range of days DuckDB hands to the scans, so a night opens only those days' files
    SELECT DISTINCT CAST(a.date - CAST(d.back AS INTEGER) AS DATE) AS date, a.platform
    FROM anchors AS a, range(0, 8) AS d(back)
),
answers AS (
    SELECT r.date, r.platform, r.category = 'canary' AS canary, r.response_model, r.system_fingerprint,
           length(r.answer_text) AS chars,
           s.option_list_kind IS NOT NULL AS lists,
           coalesce(s.invalid_reason = 'refusal', false) AS refused
    FROM {{ ref('stg_responses') }} AS r
    SEMI JOIN window_days USING (date, platform)
    LEFT JOIN {{ ref('stg_all_samples') }} AS s USING (request_key, date, platform)
),
pairs AS (
    SELECT p.date AS day, p.platform, a.* EXCLUDE (platform), a.date = p.date AS today
    FROM anchors AS p
    JOIN answers AS a ON a.platform = p.platform AND a.date BETWEEN p.date - INTERVAL 7 DAY AND p.date
),
week AS (
    SELECT day, platform, count(DISTINCT date) AS baseline_days, list(DISTINCT response_model) AS models,
           list(DISTINCT system_fingerprint) FILTER (WHERE system_fingerprint IS NOT NULL) AS prints,
           median(chars) FILTER (WHERE canary) AS median_chars
    FROM pairs
    WHERE NOT today
    GROUP BY ALL
),
counts AS (
    SELECT p.day AS date, p.platform, any_value(w.baseline_days) AS baseline_days,
           count(*) FILTER (WHERE p.today) AS answers_today,
           count(*) FILTER (WHERE NOT p.today) AS answers_before,
           count(*) FILTER (WHERE p.today AND p.response_model IS NOT NULL
                            AND NOT list_contains(coalesce(w.models, []), p.response_model)) AS new_model,
           mode(p.response_model) FILTER (WHERE p.today) AS model_today,
           count(*) FILTER (WHERE p.today AND p.system_fingerprint IS NOT NULL) AS printed_today,
           count(*) FILTER (WHERE NOT p.today AND p.system_fingerprint IS NOT NULL) AS printed_before,
           count(*) FILTER (WHERE p.today AND p.system_fingerprint IS NOT NULL
                            AND NOT list_contains(coalesce(w.prints, []), p.system_fingerprint)) AS new_print,
           mode(p.system_fingerprint) FILTER (WHERE p.today) AS print_today,
           count(*) FILTER (WHERE p.today AND p.canary) AS canaries_today,
           count(*) FILTER (WHERE NOT p.today AND p.canary) AS canaries_before,
           count(*) FILTER (WHERE p.today AND p.canary AND p.chars > w.median_chars) AS long_today,
           count(*) FILTER (WHERE NOT p.today AND p.canary AND p.chars > w.median_chars) AS long_before,
           count(*) FILTER (WHERE p.today AND p.canary AND p.lists) AS lists_today,
           count(*) FILTER (WHERE NOT p.today AND p.canary AND p.lists) AS lists_before,
           count(*) FILTER (WHERE p.today AND p.canary AND p.refused) AS refused_today,
           count(*) FILTER (WHERE NOT p.today AND p.canary AND p.refused) AS refused_before
    FROM pairs AS p
    LEFT JOIN week AS w USING (day, platform)
    GROUP BY p.day, p.platform
),
signals AS (
    SELECT date, platform, 'model' AS signal, new_model AS x1, answers_today AS n1, 0 AS x0,
           answers_before AS n0, model_today AS value_today, baseline_days FROM counts
    UNION ALL
    SELECT date, platform, 'fingerprint', new_print, printed_today, 0, printed_before, print_today, baseline_days
    FROM counts
    UNION ALL
    SELECT date, platform, 'canary_length', long_today, canaries_today, long_before, canaries_before, NULL,
           baseline_days FROM counts
    UNION ALL
    SELECT date, platform, 'canary_lists', lists_today, canaries_today, lists_before, canaries_before, NULL,
           baseline_days FROM counts
    UNION ALL
    SELECT date, platform, 'canary_refusals', refused_today, canaries_today, refused_before, canaries_before, NULL,
           baseline_days FROM counts
),
tested AS (
    SELECT *, two_proportion_z(x1, n1, x0, n0) AS z,
           coalesce(CASE
               WHEN signal IN ('model', 'fingerprint') THEN n0 > 0 AND n1 > 0 AND x1 >= 0.5 * n1
               ELSE baseline_days >= 3 AND normal_two_sided_p(two_proportion_z(x1, n1, x0, n0)) < 0.001
           END, false) AS shifted
    FROM signals
),
today AS (
    SELECT t.*, coalesce(y.shifted, false) AS shifted_the_day_before
    FROM tested AS t
    SEMI JOIN {{ run_partitions }} USING (date, platform)
    LEFT JOIN tested AS y ON y.platform = t.platform AND y.signal = t.signal AND y.date = t.date - 1
)
SELECT
    date,
    platform,
    signal,
    value_today,
    x1,
    n1,
    x0,
    n0,
    unnest(against_baseline(x1, n1, x0, n0)),  -- rate, baseline_rate and their intervals (macros.sql)
    z,
    normal_two_sided_p(z) AS p_value,
    coalesce(baseline_days, 0) AS baseline_days,
    shifted AND (signal IN ('model', 'fingerprint') OR NOT shifted_the_day_before) AS flagged,
    $run_id AS run_id
FROM today
