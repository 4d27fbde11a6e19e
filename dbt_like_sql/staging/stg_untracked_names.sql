-- kind: ephemeral
-- grain: request_key, name_key
-- One row per name a valid answer offers as an option that no alias of the catalog matches
-- (clean/untracked.py), with the form the answer gives it in parentheses.
SELECT
    request_key,
    date,
    platform,
    category,
    name,
    name_key,
    other_form,
    other_key,
    list_rank
FROM {{ ref('sample_untracked_names') }}
