-- kind: incremental
-- grain: date, platform, config_version, analyzer_version
-- The collection-quality panel: how well each platform's day was collected and analysed.
--   task_wait_s_*      an event-driven task planned to its first request sent
--   success_share      requests answered, of the requests of the day
--   retries_per_request HTTP attempts beyond the first, per request
--   parse_success      HTTP 200 bodies that were complete chat completions
--   moderation_share   answers the platform's moderation stopped
--   skipped_already_done requests found answered already and not sent again, over every run of the day
--   replay_diff_share  the latest `visibility replay` of the day: answers the current analyzer reads differently
--   alert_latency_s    the day's last answer received to its alerts stored
WITH versions AS (
    SELECT date, platform, config_version, analyzer_version, count(*) AS samples
    FROM {{ ref('cleaned_samples') }}
    SEMI JOIN {{ run_partitions }} USING (date, platform)
    GROUP BY ALL
),
requests AS (
    SELECT date, platform, count(*) AS requests, count(*) FILTER (state = 'succeeded') AS succeeded,
           sum(greatest(attempts - 1, 0)) AS retries
    FROM {{ ref('collection_requests') }}
    SEMI JOIN {{ run_partitions }} USING (date, platform)
    GROUP BY ALL
),
bodies AS (
    SELECT date, platform, count(*) FILTER (http_status = 200) AS ok_bodies,
           count(*) FILTER (http_status = 200 AND error_class = 'malformed') AS malformed_bodies
    FROM {{ ref('http_attempts') }}
    SEMI JOIN {{ run_partitions }} USING (date, platform)
    GROUP BY ALL
),
answers AS (
    SELECT date, platform, count(*) AS answers, count(*) FILTER (outcome = 'moderated') AS moderated,
           max(received_at) AS last_received_at
    FROM {{ ref('raw_ai_responses') }}
    SEMI JOIN {{ run_partitions }} USING (date, platform)
    GROUP BY ALL
),
runs AS (
    SELECT date, platform, count(*) AS collection_runs, sum(skipped_done) AS skipped_already_done
    FROM {{ ref('collection_runs') }}
    SEMI JOIN {{ run_partitions }} USING (date, platform)
    GROUP BY ALL
),
task_waits AS (
    SELECT t.date, t.platform, t.task_id, date_part('epoch', min(a.started_at) - t.created_at) AS wait_s
    FROM {{ ref('collection_tasks') }} AS t
    SEMI JOIN {{ run_partitions }} USING (date, platform)
    JOIN {{ ref('collection_requests') }} AS r ON r.task_id = t.task_id
    JOIN {{ ref('http_attempts') }} AS a ON a.request_key = r.request_key AND a.date = r.date AND a.platform = r.platform
    GROUP BY t.date, t.platform, t.task_id, t.created_at
),
tasks AS (
    SELECT date, platform, count(*) AS tasks, avg(wait_s) AS task_wait_s_avg, max(wait_s) AS task_wait_s_max
    FROM task_waits
    GROUP BY ALL
),
replays AS (
    SELECT date, platform, arg_max(diff_share, replayed_at) AS replay_diff_share
    FROM {{ ref('analyzer_replays') }}
    SEMI JOIN {{ run_partitions }} USING (date, platform)
    GROUP BY ALL
),
alerts AS (
    SELECT date, platform, count(*) AS alerts, max(stored_at) AS alerts_stored_at
    FROM {{ ref('fct_visibility_alerts') }}
    SEMI JOIN {{ run_partitions }} USING (date, platform)
    GROUP BY ALL
)
SELECT
    v.date,
    v.platform,
    v.config_version,
    v.analyzer_version,
    v.samples,
    r.requests,
    r.succeeded / r.requests AS success_share,
    r.retries / r.requests AS retries_per_request,
    CASE WHEN b.ok_bodies > 0 THEN 1 - b.malformed_bodies / b.ok_bodies END AS parse_success,
    CASE WHEN an.answers > 0 THEN an.moderated / an.answers END AS moderation_share,
    coalesce(ru.skipped_already_done, 0) AS skipped_already_done,
    coalesce(ru.collection_runs, 0) AS collection_runs,
    coalesce(t.tasks, 0) AS tasks,
    t.task_wait_s_avg,
    t.task_wait_s_max,
    rp.replay_diff_share,
    coalesce(al.alerts, 0) AS alerts,
    date_part('epoch', al.alerts_stored_at - an.last_received_at) AS alert_latency_s,
    $run_id AS run_id
FROM versions AS v
LEFT JOIN requests AS r USING (date, platform)
LEFT JOIN bodies AS b USING (date, platform)
LEFT JOIN answers AS an USING (date, platform)
LEFT JOIN runs AS ru USING (date, platform)
LEFT JOIN tasks AS t USING (date, platform)
LEFT JOIN replays AS rp USING (date, platform)
LEFT JOIN alerts AS al USING (date, platform)
