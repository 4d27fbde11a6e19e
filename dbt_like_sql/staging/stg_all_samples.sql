-- kind: ephemeral
-- grain: request_key
-- One row per cleaned answer, canary prompts included (stg_samples leaves them out): what the
-- collection-quality panel and the model-change canary read.
SELECT
    request_key,
    date,
    platform,
    category,
    valid,
    invalid_reason,
    option_list_kind,
    config_version,
    analyzer_version
FROM {{ ref('cleaned_samples') }}
