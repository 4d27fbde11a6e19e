"""Sources: the domains each platform's answers to the category cite, the brand's own-domain
citations, and the domains cited beside competitors but never beside the brand."""

from __future__ import annotations

import duckdb

from visibility_assets.serve.filters import Filters
from visibility_assets.serve.views.grid import Grid

TOP_DOMAINS = 15  # per platform

CITED = """
WITH answers AS (
    SELECT request_key, platform FROM stg_samples
    WHERE category = $category AND valid AND date BETWEEN $start AND $end
      AND (len($platforms) = 0 OR list_contains($platforms, platform))
),
citations AS (
    SELECT DISTINCT c.request_key, c.platform, c.domain, c.domain_class, c.own_brand
    FROM sample_citations AS c
    SEMI JOIN answers AS a USING (request_key)
    WHERE c.date BETWEEN $start AND $end
)
"""

DOMAINS = CITED + """,
valid AS (SELECT platform, count(*) AS valid_answers FROM answers GROUP BY platform),
counted AS (
    SELECT platform, domain, any_value(domain_class) AS domain_class, any_value(own_brand) AS own_brand,
           count(DISTINCT request_key) AS citing_answers
    FROM citations
    GROUP BY platform, domain
),
ranked AS (
    SELECT c.*, v.valid_answers, c.citing_answers / v.valid_answers AS share,
           row_number() OVER (PARTITION BY c.platform ORDER BY c.citing_answers DESC, c.domain) AS rank
    FROM counted AS c JOIN valid AS v USING (platform)
)
SELECT platform, rank, domain, domain_class, own_brand, citing_answers, valid_answers, share
FROM ranked WHERE rank <= $top
ORDER BY platform, rank
"""

OWN = CITED + """,
naming AS (
    SELECT request_key FROM brand_mentions
    WHERE brand = $brand AND category = $category AND date BETWEEN $start AND $end
)
SELECT platform, domain, count(DISTINCT request_key) AS citing_answers,
       count(DISTINCT request_key) FILTER (WHERE request_key IN (SELECT request_key FROM naming))
           AS citing_answers_naming_brand
FROM citations
WHERE own_brand = $brand
GROUP BY ALL
ORDER BY citing_answers DESC, platform, domain
"""

BESIDE_COMPETITORS = CITED + """,
named AS (
    SELECT request_key, brand FROM brand_mentions
    WHERE category = $category AND date BETWEEN $start AND $end
      AND (len($platforms) = 0 OR list_contains($platforms, platform))
),
beside AS (
    SELECT c.domain, any_value(c.domain_class) AS domain_class, n.brand = $brand AS with_brand,
           count(DISTINCT c.request_key) AS answers, list(DISTINCT n.brand ORDER BY n.brand) AS brands
    FROM citations AS c JOIN named AS n USING (request_key)
    GROUP BY c.domain, with_brand
)
SELECT domain, domain_class, answers AS citing_answers, list_filter(brands, b -> b <> $brand) AS competitors
FROM beside
WHERE NOT with_brand AND domain NOT IN (SELECT domain FROM beside WHERE with_brand)
ORDER BY answers DESC, domain
LIMIT 50
"""


def sources(conn: duckdb.DuckDBPyConnection, filters: Filters) -> dict:
    scope = filters.params("category", "start", "end", "platforms")
    return {"tables": {
        "domains": Grid.of(conn.execute(DOMAINS, {**scope, "top": TOP_DOMAINS})),
        "own_domains": Grid.of(conn.execute(OWN, {**scope, "brand": filters.brand})),
        "beside_competitors_only": Grid.of(conn.execute(BESIDE_COMPETITORS, {**scope, "brand": filters.brand})),
    }}
