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
    FROM {{ ref('stg_all_samples') }}
    SEMI JOIN {{ run_partitions }} USING (date, platform)
    GROUP BY ALL
),
replays AS (
    SELECT date, platform, arg_max(diff_share, replayed_at) AS replay_diff_share
    FROM {{ ref('stg_analyzer_replays') }}
    SEMI JOIN {{ run_partitions }} USING (date, platform)
    GROUP BY ALL
),
alerts AS (
    SELECT date, platform, count(*) AS alerts, max(stored_at) AS alerts_stored_at
    FROM {{ run_rows('fct_visibility_alerts') }}
    GROUP BY ALL
)
SELECT
    v.date,
    v.platform,
    v.config_version,
    v.analyzer_version,
    v.samples,
    c.requests,
    c.succeeded_requests / c.requests AS success_share,
    c.retries / c.requests AS retries_per_request,
    CASE WHEN c.ok_bodies > 0 THEN 1 - c.malformed_bodies / c.ok_bodies END AS parse_success,
    CASE WHEN c.answers > 0 THEN c.moderated / c.answers END AS moderation_share,
    coalesce(c.skipped_already_done, 0) AS skipped_already_done,
    coalesce(c.collection_runs, 0) AS collection_runs,
    coalesce(c.tasks, 0) AS tasks,
    c.task_wait_s_avg,
    c.task_wait_s_max,
    rp.replay_diff_share,
    coalesce(al.alerts, 0) AS alerts,
    date_part('epoch', al.alerts_stored_at - c.last_received_at) AS alert_latency_s,
    $run_id AS run_id
FROM versions AS v
LEFT JOIN {{ run_rows('int_partition_requests') }} AS c USING (date, platform)
LEFT JOIN replays AS rp USING (date, platform)
LEFT JOIN alerts AS al USING (date, platform)
