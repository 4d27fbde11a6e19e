"""The overview's first screen (tiles, the category's ranking, the next steps) read from the same
layer as the detailed table, and every view's tables as one XLSX workbook."""

import io
import re
import zipfile

import pytest

from tests.workspace_lake import DAY, FIRST_DAY
from visibility_assets.serve.views.first_screen import TILES
from visibility_assets.serve.workspace import VIEWS
from visibility_assets.warehouse.lake import reading

pytestmark = pytest.mark.loopback
SCOPE = f"from={FIRST_DAY}&to={DAY}"


@pytest.mark.parametrize("scope", [SCOPE, f"from={DAY}&to={DAY}"])  # no earlier period; a day after a day
def test_the_tiles_are_the_pooled_figures_and_say_whether_each_change_is_significant(workspace, scope):
    client = workspace.client("ana")
    body = client.get(f"/api/overview?brand=阿里云&{scope}").json()
    pooled = {row["metric"]: row for row in body["figures"] if row["platform"] == "all"}
    page = client.get(f"/overview?brand=阿里云&{scope}").text
    tiles = re.findall(r'class="tile" data-metric="([a-z0-9_]+)"', page)
    assert tiles == [m for m in TILES if m in pooled]
    for metric in tiles:
        tile = page.split(f'data-metric="{metric}"', 1)[1].split("</a>", 1)[0]
        row = pooled[metric]
        shown = f"{row['value']:.2f}" if metric == "avg_list_rank" else f"{row['value'] * 100:.1f}%"
        assert shown in tile, (metric, tile)
        if row["change"] is None:
            assert "no earlier period" in tile
        else:
            assert ("significant" in tile) == bool(row["significant"]) != ("within chance" in tile), (metric, tile)


def test_the_ranking_places_the_brand_by_its_share_of_voice_among_the_category(workspace):
    body = workspace.client("vera").get(f"/api/overview?brand=腾讯云&{SCOPE}").json()
    with reading(workspace.lake) as conn:
        counts = dict(conn.execute("SELECT brand, sum(mentioned_answers) FROM mention_metrics WHERE category = 'cloud'"
                                   " AND date BETWEEN ? AND ? GROUP BY brand", [FIRST_DAY, DAY]).fetchall())
    own = body["place"]
    assert own["brand"] == "腾讯云" and own["of"] == len(counts)
    assert own["place"] == 1 + sum(1 for n in counts.values() if n > counts["腾讯云"])
    shown = body["ranking"]
    assert [r["mentions"] for r in shown] == sorted((r["mentions"] for r in shown), reverse=True)
    assert sum(r["current"] for r in shown) == 1


def test_the_next_steps_are_ranked_by_demand_and_each_is_what_its_view_shows(workspace):
    client = workspace.client("ana")
    body = client.get(f"/api/overview?brand=阿里云&{SCOPE}").json()
    steps = body["next_steps"]
    assert steps, "the simulated answers leave something to act on"
    assert [s["weight"] for s in steps] == sorted((s["weight"] for s in steps), reverse=True)
    weights = workspace.config.question_weights
    for step in steps:
        if step["kind"] == "advised_against":
            answers = client.get(f"/api/answers?brand=阿里云&{SCOPE}&named=against&question={step['question_id']}").json()
            assert answers["total"] == step["answers"] and step["weight"] == pytest.approx(
                weights[step["question_id"]] * step["answers"], abs=1e-3)
            assert all(a["recommended"] is False for a in answers["answers"])
        elif step["kind"] == "recommended_elsewhere":
            rows = [r for r in client.get(f"/api/questions?brand=阿里云&{SCOPE}").json()["questions"]
                    if r["question_id"] == step["question_id"]]
            assert sum(r["recommending"] for r in rows) == 0 and any(r["others_recommended"] for r in rows)
        elif step["kind"] == "cited_beside_competitors":
            only = client.get(f"/api/sources?brand=阿里云&{SCOPE}").json()["beside_competitors_only"]
            assert step["subject"] in {row["domain"] for row in only}
        else:
            assert step["kind"] == "new_untracked"
            assert step["subject"] in {row["name"] for row in body["also_recommended"] if row["new"]}
    page = client.get(f"/overview?brand=阿里云&{SCOPE}").text
    assert page.count('class="step step-') == len(steps)


def test_every_views_tables_download_as_one_workbook_a_sheet_each(workspace):
    client = workspace.client("ana")
    for name in VIEWS:
        body = client.get(f"/api/{name}?{SCOPE}").json()
        response = client.get(f"/api/{name}?{SCOPE}&format=xlsx")
        assert response.status_code == 200 and response.headers["content-type"].startswith(
            "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet"), name
        with zipfile.ZipFile(io.BytesIO(response.content)) as book:
            sheets = re.findall(r'<sheet name="([^"]+)"', book.read("xl/workbook.xml").decode())
            assert sheets and all(isinstance(body.get(sheet), list) for sheet in sheets), (name, sheets)
            assert len(book.read("xl/worksheets/sheet1.xml")) > 100
    hostile = client.get(f"/api/competitors?{SCOPE}&format=xlsx").content
    with zipfile.ZipFile(io.BytesIO(hostile)) as book:
        sheet = book.read("xl/worksheets/sheet1.xml").decode()
    assert "<f>" not in sheet  # a name starting with "=" stays text, never a formula
