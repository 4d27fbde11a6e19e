"""The overview's first screen: the brand's headline figures as tiles (value, 95% interval, the
change and whether the alerts' test calls it significant), the category's ranking with the
brand's place, and the next steps, ranked by demand: questions whose answers recommend
competitors and never the brand, domains cited beside competitors and never beside the brand,
answers that advise against the brand, and new names the catalog does not track. A step's weight
is the answers it concerns, each counted at its question's demand weight (questions.yaml)."""

from __future__ import annotations

from dataclasses import dataclass

import duckdb

from visibility_assets.measure.metric_catalog import metric_catalog
from visibility_assets.serve.filters import Filters
from visibility_assets.serve.views.grid import Grid
from visibility_assets.serve.views.sources import BESIDE_COMPETITORS

TILES = ("mention_rate", "share_of_voice", "avg_list_rank", "recommend_rate", "negative_rate")
RANKED = 5  # brands shown above the brand's own place
STEPS = 8
STEP_COLUMNS = ("kind", "subject", "text", "weight", "answers", "view", "question_id", "named")

# Per question, the brand's answers recommending it and advising against it, and every other
# brand's recommending answers: from brand_mentions alone (it carries the question), in the
# partitions cleaned while the brand was tracked, as the questions and answers views count them.
RECOMMENDING_PER_QUESTION = """
SELECT question_id, brand, count(*) FILTER (WHERE recommended) AS recommending,
       count(*) FILTER (WHERE recommended = false) AS against
FROM brand_mentions
SEMI JOIN (SELECT date, platform FROM mention_metrics
           WHERE brand = $brand AND category = $category AND date BETWEEN $start AND $end) USING (date, platform)
WHERE category = $category AND date BETWEEN $start AND $end
  AND (len($platforms) = 0 OR list_contains($platforms, platform))
GROUP BY question_id, brand
HAVING brand = $brand OR count(*) FILTER (WHERE recommended) > 0
"""

# Every tracked brand of the category pooled over the period, by share of voice: the brand's
# mentions over all the category's tracked mentions (ties share a place).
RANKING = """
SELECT brand, sum(mentioned_answers) AS mentions,
       sum(mentioned_answers) / nullif(sum(category_mentions), 0) AS share_of_voice
FROM mention_metrics
WHERE category = $category AND date BETWEEN $start AND $end
  AND (len($platforms) = 0 OR list_contains($platforms, platform))
GROUP BY brand
ORDER BY mentions DESC, brand
"""


@dataclass(frozen=True)
class Tile:
    metric: str
    label: str
    row: dict  # the figures row of the pooled platforms ('all')


def tiles(figures: Grid) -> list[Tile]:
    labels = {m.name: m.label for m in metric_catalog()}
    pooled = {row["metric"]: row for row in figures.rows if row["platform"] == "all"}
    return [Tile(name, labels[name], pooled[name]) for name in TILES if name in pooled]


def ranking(conn: duckdb.DuckDBPyConnection, filters: Filters) -> tuple[Grid, dict | None]:
    """The top RANKED brands and the brand's own row, each with its place; and the brand's row."""
    rows = conn.execute(RANKING, filters.params("category", "start", "end", "platforms")).fetchall()
    ranked, place, before = [], 0, None
    for index, (brand, mentions, voice) in enumerate(rows, start=1):
        place = place if mentions == before else index
        before = mentions
        ranked.append({"place": place, "brand": brand, "mentions": mentions, "share_of_voice": voice,
                       "current": brand == filters.brand, "of": len(rows)})
    own = next((row for row in ranked if row["current"]), None)
    shown = [row for row in ranked if row["place"] <= RANKED or row["current"]]
    return Grid(("place", "brand", "mentions", "share_of_voice", "current", "of"), tuple(shown)), own


def next_steps(conn: duckdb.DuckDBPyConnection, filters: Filters, texts: dict[str, str], weights: dict[str, float],
               also_offered: Grid) -> Grid:
    pooled: dict[str, dict] = {}
    rows = conn.execute(RECOMMENDING_PER_QUESTION,
                        filters.params("brand", "category", "start", "end", "platforms")).fetchall()
    for question, brand, recommending, against in rows:
        entry = pooled.setdefault(question, {"recommending": 0, "against": 0, "others": {}})
        if brand == filters.brand:
            entry["recommending"], entry["against"] = recommending, against
        else:
            entry["others"][brand] = recommending
    steps = []
    for question, entry in pooled.items():
        weight, text = weights.get(question, 1.0), texts.get(question, question)
        if entry["recommending"] == 0 and entry["others"]:
            others = sorted(entry["others"].items(), key=lambda item: (-item[1], item[0]))
            count = sum(entry["others"].values())
            names = ", ".join(f"{brand} ({n})" for brand, n in others[:3])
            steps.append(_step("recommended_elsewhere", question, f"{question} {text}: answers recommend {names},"
                               f" never {filters.brand}", weight * count, count, "answers", question, "all"))
        if entry["against"]:
            steps.append(_step("advised_against", question, f"{question} {text}: {entry['against']} answer(s) advise"
                               f" against {filters.brand}", weight * entry["against"], entry["against"], "answers",
                               question, "against"))
    scope = filters.params("category", "start", "end", "platforms")
    for domain, _, citing, competitors in conn.execute(BESIDE_COMPETITORS, {**scope, "brand": filters.brand}).fetchall():
        steps.append(_step("cited_beside_competitors", domain, f"{domain} is cited beside {', '.join(competitors[:3])}"
                           f" in {citing} answer(s), never beside {filters.brand}", citing, citing, "sources"))
    for row in also_offered.rows:
        if row.get("new"):
            steps.append(_step("new_untracked", row["name"], f"{row['name']} is offered in {row['answers']} answer(s),"
                               f" first seen {row['first_seen']}, and not in brands.yaml", row["answers"],
                               row["answers"], "overview"))
    steps.sort(key=lambda step: (-step["weight"], step["kind"], step["subject"]))
    return Grid(STEP_COLUMNS, tuple(steps[:STEPS]))


def _step(kind: str, subject: str, text: str, weight: float, answers: int, view: str, question: str | None = None,
          named: str | None = None) -> dict:
    return {"kind": kind, "subject": subject, "text": text, "weight": round(weight, 3), "answers": answers,
            "view": view, "question_id": question, "named": named}
