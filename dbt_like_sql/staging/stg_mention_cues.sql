-- kind: view
-- grain: request_key, brand, start_pos
-- Each accepted mention's lexicon cue words (the sign says which way each weighed: +稳定, -贵).
SELECT
    request_key,
    date,
    platform,
    brand,
    start_pos,
    sentiment_cues
FROM {{ ref('entity_matches') }}
WHERE accepted AND len(sentiment_cues) > 0
