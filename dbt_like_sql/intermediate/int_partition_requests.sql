-- kind: incremental
-- grain: date, platform
-- What collecting each partition took, from the collection tables: one row per partition of the
-- run that any of them holds, each figure null where its table holds nothing of the partition
-- (answers collected before requests were kept, a partition no task asked for). collection_costs
-- and fct_collection_quality read it, and so does the raw asset's metadata in Dagster
-- (measure/partition_figures.py runs this SQL for the partition it has just published). Built for the run's partitions only (a night reads its
-- own day of the collection tables, whatever the history); a re-analysis run builds it again
-- from what the collection tables hold then.
WITH run_requests AS (
    SELECT * FROM {{ ref('stg_requests') }} SEMI JOIN {{ run_partitions }} USING (date, platform)
),
run_attempts AS (
    SELECT * FROM {{ ref('stg_http_attempts') }} SEMI JOIN {{ run_partitions }} USING (date, platform)
),
requests AS (
    SELECT date, platform, count(*) AS requests, count(*) FILTER (state = 'succeeded') AS succeeded_requests,
           count(*) FILTER (state = 'failed') AS failed_requests,
           sum(attempts) AS http_attempts, sum(greatest(attempts - 1, 0)) AS retries
    FROM run_requests
    GROUP BY ALL
),
bodies AS (
    SELECT date, platform, count(*) FILTER (http_status = 200) AS ok_bodies,
           count(*) FILTER (http_status = 200 AND error_class = 'malformed') AS malformed_bodies,
           count(*) FILTER (http_status = 429) AS http_429
    FROM run_attempts
    GROUP BY ALL
),
spans AS (  -- each run's span, its first attempt sent to its last finished
    SELECT date, platform, run_id, date_part('epoch', max(finished_at) - min(started_at)) AS wall_s
    FROM run_attempts
    GROUP BY ALL
),
walls AS (
    SELECT date, platform, sum(wall_s) AS collection_wall_s FROM spans GROUP BY ALL
),
answers AS (
    SELECT
        date,
        platform,
        count(*) AS answers,
        count(*) FILTER (outcome = 'moderated') AS moderated,
        count(*) FILTER (outcome = 'truncated') AS truncated,
        sum(prompt_tokens) AS prompt_tokens,
        sum(cached_tokens) AS cached_tokens,
        sum(completion_tokens) AS completion_tokens,
        sum(reasoning_tokens) AS reasoning_tokens,
        sum(coalesce(search_count, CASE WHEN search_used THEN 1 ELSE 0 END)) AS searches,
        count(*) FILTER (search_used) AS answers_with_search,
        sum(cost) AS cost,
        count(cost) AS costed_answers,
        max(currency) AS currency,
        max(received_at) AS last_received_at,
        quantile_disc(latency_ms, 0.5) AS latency_p50_ms,
        quantile_disc(latency_ms, 0.95) AS latency_p95_ms
    FROM {{ ref('stg_responses') }}
    SEMI JOIN {{ run_partitions }} USING (date, platform)
    GROUP BY ALL
),
runs AS (
    SELECT date, platform, count(*) AS collection_runs, sum(skipped_done) AS skipped_already_done
    FROM {{ ref('stg_collection_runs') }}
    SEMI JOIN {{ run_partitions }} USING (date, platform)
    GROUP BY ALL
),
task_waits AS (  -- an event-driven task planned to its first request sent
    SELECT t.date, t.platform, t.task_id, date_part('epoch', min(a.started_at) - t.created_at) AS wait_s
    FROM {{ ref('stg_collection_tasks') }} AS t
    JOIN run_requests AS r ON r.task_id = t.task_id AND r.date = t.date AND r.platform = t.platform
    JOIN run_attempts AS a
      ON a.request_key = r.request_key AND a.date = r.date AND a.platform = r.platform
    GROUP BY t.date, t.platform, t.task_id, t.created_at
),
tasks AS (
    SELECT date, platform, count(*) AS tasks, avg(wait_s) AS task_wait_s_avg, max(wait_s) AS task_wait_s_max
    FROM task_waits
    GROUP BY ALL
),
partitions AS (
    SELECT date, platform FROM requests
    UNION SELECT date, platform FROM bodies
    UNION SELECT date, platform FROM answers
    UNION SELECT date, platform FROM runs
    UNION SELECT date, platform FROM tasks
)
SELECT
    p.date,
    p.platform,
    r.requests,
    r.succeeded_requests,
    r.failed_requests,
    r.http_attempts,
    r.retries,
    b.ok_bodies,
    b.malformed_bodies,
    b.http_429,
    w.collection_wall_s,
    a.* EXCLUDE (date, platform),
    ru.collection_runs,
    ru.skipped_already_done,
    t.tasks,
    t.task_wait_s_avg,
    t.task_wait_s_max
FROM partitions AS p
LEFT JOIN requests AS r USING (date, platform)
LEFT JOIN bodies AS b USING (date, platform)
LEFT JOIN walls AS w USING (date, platform)
LEFT JOIN answers AS a USING (date, platform)
LEFT JOIN runs AS ru USING (date, platform)
LEFT JOIN tasks AS t USING (date, platform)
