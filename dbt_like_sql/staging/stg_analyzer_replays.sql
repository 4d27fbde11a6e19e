-- kind: ephemeral
-- grain: replay_id, date, platform
-- One row per replay of a partition's stored answers (`visibility replay`).
SELECT
    replay_id,
    date,
    platform,
    replayed_at,
    diff_share
FROM {{ ref('analyzer_replays') }}
