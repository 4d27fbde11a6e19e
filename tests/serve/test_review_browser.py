"""Review in a real browser (headless Chromium against `visibility serve`): an analyst reviews
20 items with the keyboard alone, one of them a mention removed; the accuracy page, /api/accuracy
and the overview's sentences count them; once the reviewed partitions are cleaned and measured
again (what the review sensor's run does), the removed mention has left its day's mention rate.
A viewer is refused the Review view."""

import json
import os
import uuid
from datetime import date
from pathlib import Path

import pytest

from tests.serve.test_workspace_browser import _log_in, _shot, browser, served  # noqa: F401 (fixtures)
from tests.workspace_lake import DAY, FIRST_DAY, PASSWORD
from visibility_assets.clean.defs import clean_partitions
from visibility_assets.core.partitions import Partition
from visibility_assets.measure.project import load_project
from visibility_assets.measure.runner import materialize_models
from visibility_assets.review.store import ReviewStore
from visibility_assets.warehouse.lake import reading
from visibility_assets.warehouse.resource import WarehouseResource

pytestmark = pytest.mark.system

BRAND = "华为云"
SCOPE = f"brand={BRAND}&category=cloud&from={FIRST_DAY}&to={DAY}"
REVIEWED = 20
MENTIONS = ("SELECT sum(mentioned_answers), sum(reviewed_answers) FROM mention_metrics"
            " WHERE brand = ? AND date = ? AND platform = ?")


@pytest.mark.long
def test_an_analyst_reviews_twenty_items_with_the_keyboard_and_the_figures_follow(served, browser, workspace,
                                                                                   tmp_path):
    from selenium.webdriver.common.by import By
    from selenium.webdriver.common.keys import Keys
    from selenium.webdriver.support import expected_conditions as seen
    from selenium.webdriver.support.ui import WebDriverWait

    shots = Path(os.environ.get("VISIBILITY_SCREENSHOTS") or tmp_path)
    shots.mkdir(parents=True, exist_ok=True)
    wait = WebDriverWait(browser, 20)
    workspace.accounts.add("kira", "analyst", PASSWORD)
    _log_in(browser, served, "kira")
    wait.until(seen.url_contains("/overview"))
    browser.get(f"{served}/review?{SCOPE}")
    removed = None
    for index in range(REVIEWED):
        form = wait.until(seen.presence_of_element_located((By.CSS_SELECTOR, "#review-form[data-keys=ready]")))
        key = form.find_element(By.NAME, "request_key").get_attribute("value")
        body = browser.find_element(By.TAG_NAME, "body")
        if index == 0:
            _shot(browser, "review", shots)
        named = form.find_element(By.CSS_SELECTOR, "input[name=mentioned][value=true]").is_selected()
        if named and removed is None:  # a false mention: m marks it not named
            body.send_keys("m")
            assert "corrected" in form.find_element(By.CSS_SELECTOR, "tr[data-field=mentioned]").get_attribute("class")
            removed = (key, form.find_element(By.NAME, "date").get_attribute("value"),
                       form.find_element(By.NAME, "platform").get_attribute("value"))
        elif named and index % 3 == 0:
            body.send_keys("n")  # the tone corrected to negative
        body.send_keys(Keys.ENTER)  # saved: the page deals the next item
        wait.until(seen.staleness_of(form))
    assert removed is not None, "no answer named the brand among the items dealt"

    browser.get(f"{served}/accuracy?{SCOPE}")
    row = browser.find_element(By.CSS_SELECTOR, "#accuracy-fields tr[data-field=mentioned]")
    assert f"{REVIEWED} of the 30 random reviews" in row.text
    _shot(browser, "accuracy", shots)
    ledger = json.loads(browser.execute_script(
        f"return fetch('/api/accuracy?{SCOPE}').then(r => r.text())"))
    mentioned = next(entry for entry in ledger["fields"] if entry["field"] == "mentioned")
    assert (mentioned["reviewed"], mentioned["reviewed"] - mentioned["confirmed"]) == (REVIEWED, 1)

    # What the review sensor's run does for the reviewed partitions: clean them again (with the
    # reviews) and measure them again; then the overview counts the reviewer's labels.
    key, day, platform = removed
    with reading(workspace.lake) as conn:
        before = conn.execute(MENTIONS, [BRAND, day, platform]).fetchone()
    partitions = sorted({Partition(date.fromisoformat(r.date), r.platform) for r in _kiras(workspace)})
    warehouse = WarehouseResource.from_settings(workspace.lake)
    run_id = uuid.uuid4().hex
    clean_partitions(partitions, workspace.config.catalog, warehouse, run_id, workspace.config.domains,
                     weights=workspace.config.question_weights, reviews=ReviewStore.under(workspace.home))
    project = load_project()
    materialize_models(warehouse, project, list(project.models.values()), partitions, run_id)
    with reading(workspace.lake) as conn:
        after = conn.execute(MENTIONS, [BRAND, day, platform]).fetchone()
    assert after[0] == before[0] - 1 and after[1] >= 1  # the false mention left the day's mention rate

    browser.get(f"{served}/overview?{SCOPE}")
    sentences = browser.find_element(By.CSS_SELECTOR, "#figures tr[data-metric=mention_rate] th").text
    assert f"({REVIEWED}/30 reviews)" in sentences
    assert "reviewed" in browser.find_element(By.CSS_SELECTOR, "#figures td[data-platform=all] .base").text
    _shot(browser, "overview-after-review", shots)

    _log_in(browser, served, "vera")  # a viewer
    browser.get(f"{served}/review?{SCOPE}")
    assert "needs the analyst role" in browser.find_element(By.ID, "forbidden").text


def _kiras(workspace):
    return [r for r in ReviewStore.under(workspace.home).reviews(BRAND) if r.reviewer == "kira"]
