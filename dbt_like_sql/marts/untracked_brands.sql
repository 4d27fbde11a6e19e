-- kind: table
-- grain: category, platform, date, brand_key
-- The brands the AIs offer as options that brands.yaml does not track: per category, platform
-- and day, how many valid answers offer each and its share of the category's valid answers, its
-- best list rank, the first day the platform offered it, and the brands.yaml line that would
-- track it, rebuilt after each night (a table: the spellings are grouped over all history, too
-- much to do on every page). No interval here: any DuckDB client reads it, and lacks the models' macros (the
-- pooled figures of measure/discovery.py add one). The spellings of one brand are one row:
-- case, width, spaces and joining punctuation fold away (name_key), and a name and the form an
-- answer gives it in parentheses ("字节跳动 (ByteDance)") share the smaller of their keys
-- wherever either appears.
WITH names AS (
    SELECT * FROM {{ ref('stg_untracked_names') }}
),
pairs AS (
    SELECT category, name_key AS spelling_key, least(name_key, other_key) AS brand_key
    FROM names WHERE other_key IS NOT NULL
    UNION ALL
    SELECT category, other_key, least(name_key, other_key)
    FROM names WHERE other_key IS NOT NULL
),
paired AS (
    SELECT category, spelling_key, min(brand_key) AS brand_key FROM pairs GROUP BY ALL
),
grouped AS (
    SELECT n.*, coalesce(p.brand_key, n.name_key) AS brand_key
    FROM names AS n
    LEFT JOIN paired AS p ON p.category = n.category AND p.spelling_key = n.name_key
),
written AS (  -- each spelling, how often it is written and how often as the option's name
    SELECT category, brand_key, spelling_key, spelling, count(*) AS times, count(*) FILTER (WHERE as_name) AS named
    FROM (
        SELECT category, brand_key, name_key AS spelling_key, name AS spelling, true AS as_name FROM grouped
        UNION ALL
        SELECT category, brand_key, other_key, other_form, false FROM grouped WHERE other_key IS NOT NULL
    )
    GROUP BY ALL
),
spellings AS (  -- one spelling per key: the most written
    SELECT category, brand_key, spelling_key, first(spelling ORDER BY times DESC, spelling) AS spelling,
           sum(named) AS named
    FROM written
    GROUP BY ALL
),
labels AS (
    SELECT category, brand_key, first(spelling ORDER BY named DESC, spelling) AS name,
           list(spelling ORDER BY named DESC, spelling) AS aliases
    FROM spellings
    GROUP BY ALL
),
daily AS (
    SELECT category, platform, date, brand_key, count(DISTINCT request_key) AS answers, min(list_rank) AS best_rank
    FROM grouped
    GROUP BY ALL
),
valid AS (
    SELECT category, platform, date, count(*) FILTER (WHERE valid) AS valid_answers
    FROM {{ ref('stg_samples') }}
    GROUP BY ALL
),
shared AS (
    SELECT d.*, v.valid_answers FROM daily AS d JOIN valid AS v USING (category, platform, date)
)
SELECT
    s.category,
    s.platform,
    s.date,
    s.brand_key,
    l.name,
    l.aliases,
    s.answers,
    s.valid_answers,
    s.answers / s.valid_answers AS answer_share,
    s.best_rank,
    min(s.date) OVER (PARTITION BY s.category, s.platform, s.brand_key) AS first_seen,
    '- {name: ' || to_json(l.name) || ', category: ' || to_json(s.category)
        || ', aliases: ' || to_json(l.aliases) || '}' AS brands_yaml
FROM shared AS s
JOIN labels AS l USING (category, brand_key)
