"""The two review queues, over the lake's labels of one brand (int_brand_results: the labels the
metrics count, for every valid answer of the brand's category, named or not).

- The random queue deals the items in one fixed pseudo-random order (md5 of the answer's key and
  the brand, salted): whatever brand, platforms and period a reviewer chooses, the items dealt
  are the first of that order among those not yet reviewed, so those reviewed are a simple
  random sample of the labels shown there. It is what the accuracy ledger is computed from.
- The doubtful queue deals first the items whose labels the analyzer or the judge were least
  sure of (the reasons below, the most reasons first). Its reviews correct labels and never
  enter the estimate: they were chosen for being doubtful.
"""

from __future__ import annotations

from dataclasses import dataclass

import duckdb

from visibility_assets.review.language import answer_language
from visibility_assets.review.store import DOUBTFUL, RANDOM, MachineLabels

# Fixed for every deployment: the order must not be anyone's choice.
ORDER_SALT = "review-order-1"

ITEMS = """
WITH items AS (
    SELECT r.request_key, r.date, r.platform, r.category
    FROM int_brand_results AS r
    WHERE r.brand = $brand AND r.valid AND r.date BETWEEN $start AND $end
      AND (len($platforms) = 0 OR list_contains($platforms, r.platform))
      AND NOT list_contains($done, r.request_key)
)
"""
RANDOM_NEXT = ITEMS + """
SELECT request_key, date, platform, [] AS reasons, (SELECT count(*) FROM items) AS waiting
FROM items
ORDER BY md5(request_key || '|' || $brand || '|' || $salt)
LIMIT 1
"""
# Why a label is doubtful. A hit of the brand's alias set aside by a rule that weighs the words
# around it (not by scope: a link or a <think> block is certain).
DOUBTFUL_NEXT = ITEMS + """,
labelled AS (
    SELECT i.request_key, i.date, i.platform, r.named_unknown,
           r.judge_sentiment IS NOT NULL AND r.lexicon_sentiment IS NOT NULL
               AND r.judge_sentiment <> r.lexicon_sentiment AS judge_disagrees
    FROM items AS i
    JOIN int_brand_results AS r ON r.request_key = i.request_key AND r.brand = $brand
         AND r.date BETWEEN $start AND $end
),
matches AS (
    SELECT request_key,
           bool_or(NOT accepted AND (rule = 'boundary' OR rule LIKE 'common_word:%' OR rule LIKE 'overlapped_by:%'
                                     OR rule LIKE 'exclude_context:%')) AS set_aside,
           bool_or(accepted AND sentiment = 'positive') AND bool_or(accepted AND sentiment = 'negative') AS mixed
    FROM entity_matches
    WHERE brand = $brand AND date BETWEEN $start AND $end AND (len($platforms) = 0 OR list_contains($platforms, platform))
    GROUP BY request_key
),
reasoned AS (
    SELECT l.request_key, l.date, l.platform,
           list_filter([
               CASE WHEN l.judge_disagrees THEN 'the judge and the lexicon disagree on its tone' END,
               CASE WHEN m.set_aside THEN 'a match of one of its aliases was set aside by a rule' END,
               CASE WHEN m.mixed THEN 'praised and criticised in the same answer' END,
               CASE WHEN l.named_unknown THEN 'named only to say nothing is known of it' END
           ], reason -> reason IS NOT NULL) AS reasons
    FROM labelled AS l
    LEFT JOIN matches AS m USING (request_key)
)
SELECT request_key, date, platform, reasons, (SELECT count(*) FROM reasoned WHERE len(reasons) > 0) AS waiting
FROM reasoned
WHERE len(reasons) > 0
ORDER BY len(reasons) DESC, md5(request_key || '|' || $brand || '|' || $salt)
LIMIT 1
"""
QUEUE_SQL = {RANDOM: RANDOM_NEXT, DOUBTFUL: DOUBTFUL_NEXT}

LABELS = """
SELECT r.request_key, r.brand, r.date, r.platform, r.category, r.mentioned, r.mention_count, r.list_rank,
       r.recommended, r.sentiment, r.sentiment_source, r.judge_model, s.analyzer_version, a.answer_text
FROM int_brand_results AS r
JOIN cleaned_samples AS s ON s.request_key = r.request_key AND s.date = r.date AND s.platform = r.platform
JOIN raw_ai_responses AS a ON a.request_key = r.request_key AND a.date = r.date AND a.platform = r.platform
WHERE r.request_key = $key AND r.brand = $brand AND r.date = $date AND r.platform = $platform
"""


@dataclass(frozen=True)
class Dealt:
    request_key: str
    date: object
    platform: str
    reasons: tuple[str, ...]  # the doubtful queue's reasons; empty for the random queue
    waiting: int  # items of the queue not yet reviewed by this reviewer, this one included


def next_item(conn: duckdb.DuckDBPyConnection, queue: str, brand: str, start, end, platforms: list[str],
              done: list[str]) -> Dealt | None:
    """The queue's next item of the brand for a reviewer who has reviewed the answers `done`
    (`platforms` empty: every platform)."""
    row = conn.execute(QUEUE_SQL[queue], {"brand": brand, "start": start, "end": end, "platforms": platforms,
                                          "done": done, "salt": ORDER_SALT}).fetchone()
    return None if row is None else Dealt(row[0], row[1], row[2], tuple(row[3]), row[4])


def machine_labels(conn: duckdb.DuckDBPyConnection, request_key: str, brand: str, day,
                   platform: str) -> MachineLabels | None:
    """The item's labels as the metrics count them, and who set each."""
    cursor = conn.execute(LABELS, {"key": request_key, "brand": brand, "date": day, "platform": platform})
    row = cursor.fetchone()
    if row is None:
        return None
    found = dict(zip([c[0] for c in cursor.description], row))
    mentioned = bool(found["mentioned"])
    values = {"mentioned": mentioned, "mention_count": int(found["mention_count"] or 0) if mentioned else 0,
              "list_rank": found["list_rank"] if mentioned else None,
              "recommended": found["recommended"] if mentioned else None,
              "sentiment": found["sentiment"] if mentioned else None}
    sources = {"mentioned": "analyzer", "mention_count": "analyzer", "list_rank": "analyzer",
               "recommended": "analyzer", "sentiment": found["sentiment_source"] or "analyzer"}
    return MachineLabels(request_key, brand, str(found["date"]), platform, found["category"],
                         answer_language(found["answer_text"] or ""),
                         found["analyzer_version"], found["judge_model"], values, sources)
