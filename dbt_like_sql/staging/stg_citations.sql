-- kind: ephemeral
-- grain: request_key, url, source
-- One row per source a valid answer cites (canary prompts' included), classed when the answer
-- was cleaned.
SELECT
    request_key,
    date,
    platform,
    url,
    source,
    domain,
    domain_class,
    own_brand,
    cited
FROM {{ ref('sample_citations') }}
