-- kind: view
-- grain: platform, week, brand, kind, phrase
-- What each AI says about each brand, per platform and week: the claims the judge quoted from the
-- answers (kind 'claim') and the lexicon's cue words (kind 'cue'), each with the share of the
-- answers naming the brand that carry it, its rank in its kind, and whether it is new against
-- the week before (no answer carried it then). Summed from each partition's phrases (int_brand_phrases).
WITH weekly AS (  -- an answer is of one day: the week's answers are its days' answers summed
    SELECT platform, CAST(date_trunc('week', date) AS DATE) AS week, brand, kind, phrase, sum(answers) AS answers
    FROM {{ ref('int_brand_phrases') }}
    GROUP BY ALL
),
naming AS (  -- the answers naming the brand that week, the share's denominator
    SELECT platform, CAST(date_trunc('week', date) AS DATE) AS week, brand, sum(mentioned_answers) AS mentioned_answers
    FROM {{ ref('int_brand_daily') }}
    GROUP BY ALL
)
SELECT
    w.platform,
    w.week,
    w.brand,
    w.kind,
    w.phrase,
    w.answers,
    n.mentioned_answers,
    CASE WHEN n.mentioned_answers > 0 THEN w.answers / n.mentioned_answers END AS share,
    row_number() OVER (PARTITION BY w.platform, w.week, w.brand, w.kind ORDER BY w.answers DESC, w.phrase) AS place,
    before.answers IS NULL AS new_this_week
FROM weekly AS w
LEFT JOIN naming AS n USING (platform, week, brand)
LEFT JOIN weekly AS before
    ON before.platform = w.platform AND before.brand = w.brand AND before.kind = w.kind
   AND before.phrase = w.phrase AND before.week = w.week - INTERVAL 7 DAY
