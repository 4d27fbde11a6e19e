"""Replay against the reviewers: for the replayed answers an analyst reviewed (label_reviews),
how often the stored analyzer and the replayed one each give the reviewer's value, per label,
and the items where the replayed analyzer disagrees with the reviewer. Tone is left out: the
replay compares the analyzer's own fields, and a reviewer's tone may correct the judge's."""

from __future__ import annotations

from dataclasses import dataclass, field

import duckdb

from visibility_assets.warehouse.db import existing_tables

COMPARED = ("mentioned", "mention_count", "list_rank", "recommended")
MAX_DISAGREEMENTS = 10
REVIEWED = """
SELECT request_key, brand, mentioned, mention_count, list_rank, recommended
FROM label_reviews
WHERE list_contains($keys, request_key)
"""


@dataclass
class ReviewerAgreement:
    reviewed: dict[str, int] = field(default_factory=dict)  # label -> reviewed items compared
    stored_agrees: dict[str, int] = field(default_factory=dict)
    replayed_agrees: dict[str, int] = field(default_factory=dict)
    disagreements: list[dict] = field(default_factory=list)  # the replayed analyzer against the reviewer

    def as_json(self) -> dict:
        return {"labels": {name: {"reviewed": self.reviewed[name], "stored_agrees": self.stored_agrees[name],
                                  "replayed_agrees": self.replayed_agrees[name]} for name in self.reviewed},
                "disagreements": self.disagreements}


def reviewer_agreement(conn: duckdb.DuckDBPyConnection, stored: list[dict],
                       replayed: dict[str, dict[str, dict]]) -> ReviewerAgreement:
    """`stored`: the replay's stored rows (each with its `brands`); `replayed`: per request key,
    per brand, the replayed sample_brand_results row."""
    found = ReviewerAgreement()
    if "label_reviews" not in existing_tables(conn) or not stored:
        return found
    keys = [row["request_key"] for row in stored]
    reviews = conn.execute(REVIEWED, {"keys": keys}).fetch_arrow_table().to_pylist()
    before = {(row["request_key"], b["brand"]): b for row in stored for b in row["brands"] or ()}
    for review in reviews:
        item = (review["request_key"], review["brand"])
        old, new = _values(before.get(item, {})), _values(replayed.get(item[0], {}).get(item[1], {}))
        mine = _values(review)
        for name in COMPARED:
            if name != "mentioned" and not (mine["mentioned"] and old["mentioned"] and new["mentioned"]):
                continue  # a count, rank or recommendation only where all three find the brand named
            found.reviewed[name] = found.reviewed.get(name, 0) + 1
            found.stored_agrees[name] = found.stored_agrees.get(name, 0) + (old[name] == mine[name])
            found.replayed_agrees[name] = found.replayed_agrees.get(name, 0) + (new[name] == mine[name])
            if new[name] != mine[name] and len(found.disagreements) < MAX_DISAGREEMENTS:
                found.disagreements.append({"request_key": item[0], "brand": item[1], "label": name,
                                            "reviewer": mine[name], "replayed": new[name], "stored": old[name]})
    return found


def _values(row: dict) -> dict:
    mentioned = bool(row.get("mentioned"))
    return {"mentioned": mentioned, "mention_count": int(row.get("mention_count") or 0) if mentioned else 0,
            "list_rank": row.get("list_rank") if mentioned else None,
            "recommended": row.get("recommended") if mentioned else None}
