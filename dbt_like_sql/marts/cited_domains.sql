-- kind: incremental
-- grain: date, platform, domain, source
-- Where each AI gets its facts: per platform and day, the domains its valid answers cite, from
-- the platform's structured citations (source 'platform') and from URLs in the text ('text'),
-- each domain classed when the answer was cleaned (sample_citations: the brands' own domains,
-- then the domain table of the config; a domain covers its subdomains, the longest match wins;
-- unknown ones are 'other', under their registrable domain). share: answers citing the domain / valid answers, with its 95%
-- Wilson interval; class_share: answers citing any domain of the class; brands_mentioned: the
-- tracked brands the citing answers name.
WITH answers AS (
    SELECT date, platform, count(*) FILTER (WHERE valid) AS valid_answers
    FROM {{ run_rows('stg_samples') }}
    GROUP BY ALL
),
classified AS (
    SELECT request_key, date, platform, source, domain, domain_class, own_brand
    FROM {{ ref('stg_citations') }}
    SEMI JOIN {{ run_partitions }} USING (date, platform)
    SEMI JOIN {{ run_rows('stg_samples') }} USING (request_key, date, platform)  -- not the canary prompts
),
named AS (
    SELECT request_key, list(brand ORDER BY brand) AS brands
    FROM {{ ref('stg_brand_results') }}
    SEMI JOIN {{ run_partitions }} USING (date, platform)
    WHERE mentioned
    GROUP BY request_key
),
by_domain AS (
    SELECT k.date, k.platform, k.domain, k.source, any_value(k.domain_class) AS domain_class,
           any_value(k.own_brand) AS own_brand, count(DISTINCT k.request_key) AS citing_answers,
           list_sort(list_distinct(flatten(list(coalesce(n.brands, []))))) AS brands_mentioned
    FROM classified AS k
    LEFT JOIN named AS n USING (request_key)
    GROUP BY k.date, k.platform, k.domain, k.source
),
by_class AS (
    SELECT date, platform, domain_class, source, count(DISTINCT request_key) AS class_citing_answers
    FROM classified
    GROUP BY ALL
),
shared AS (
    SELECT d.*, a.valid_answers, c.class_citing_answers, wilson(d.citing_answers, a.valid_answers) AS domain_share
    FROM by_domain AS d
    JOIN answers AS a USING (date, platform)
    JOIN by_class AS c USING (date, platform, domain_class, source)
)
SELECT
    date,
    platform,
    domain,
    source,
    domain_class,
    own_brand,
    citing_answers,
    valid_answers,
    domain_share.rate AS share,
    domain_share.low AS share_low,
    domain_share.high AS share_high,
    class_citing_answers / valid_answers AS class_share,
    brands_mentioned,
    $run_id AS run_id
FROM shared
