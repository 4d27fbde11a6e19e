-- kind: view
-- grain: category, platform, date, query_key
-- The searches behind the answers, where a platform's response shows what its search looked
-- up (raw_ai_responses.search_queries): per category, platform and day, how many answers ran
-- each query, its share of the answers whose queries are known, its rank among that day's
-- queries and the first day the platform ran it. Spellings that differ only in case and
-- spacing are one query (query_key), shown in their most used form.
WITH searched AS (
    SELECT request_key, date, platform, category, trim(unnest(search_queries)) AS query
    FROM {{ ref('stg_responses') }}
    WHERE category <> 'canary' AND len(search_queries) > 0
),
keyed AS (
    SELECT *, lower(regexp_replace(query, '\s+', ' ', 'g')) AS query_key FROM searched
),
daily AS (
    SELECT category, platform, date, query_key, mode(query) AS query, count(DISTINCT request_key) AS answers
    FROM keyed
    GROUP BY ALL
),
known AS (
    SELECT category, platform, date, count(DISTINCT request_key) AS answers_with_queries
    FROM keyed
    GROUP BY ALL
)
SELECT
    d.category,
    d.platform,
    d.date,
    d.query_key,
    d.query,
    d.answers,
    k.answers_with_queries,
    d.answers / k.answers_with_queries AS answer_share,
    rank() OVER (PARTITION BY d.category, d.platform, d.date ORDER BY d.answers DESC) AS rank_in_day,
    min(d.date) OVER (PARTITION BY d.category, d.platform, d.query_key) AS first_seen
FROM daily AS d
JOIN known AS k USING (category, platform, date)
