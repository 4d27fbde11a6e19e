"""Review in the workspace: an analyst is dealt one (answer, brand) at a time, confirms or
corrects its labels, and the accuracy ledger counts the random queue's reviews alone; a viewer
may read the ledger but not review; every review is in the audit trail."""

import re

import pytest

from tests.workspace_lake import DAY, FIRST_DAY, PASSWORD, csrf_of

pytestmark = pytest.mark.loopback

BRAND = "腾讯云"
SCOPE = f"brand={BRAND}&from={FIRST_DAY}&to={DAY}"


def _analyst(workspace, name: str):
    if workspace.accounts.user(name) is None:
        workspace.accounts.add(name, "analyst", PASSWORD)
    return workspace.client(name)


def _dealt(page_html: str) -> dict:
    """The review form's hidden fields and the machine's values (the checked inputs)."""
    start = page_html.index('id="review-form"')
    form = page_html[start:page_html.index("</form>", start)]
    fields = dict(re.findall(r'type="hidden" name="([^"]+)"[^>]*value="([^"]*)"', form))
    fields.update(re.findall(r'type="radio" name="([^"]+)" value="([^"]*)" checked', form))
    fields.update(re.findall(r'type="number" name="([^"]+)"[^>]*value="([^"]*)"', form))
    return fields


def _review(client, queue: str = "random", change: dict | None = None) -> dict:
    page = client.get(f"/review?{SCOPE}&queue={queue}")
    assert page.status_code == 200, page.text[:300]
    fields = {**_dealt(page.text), **(change or {})}
    stored = client.post("/api/reviews", data=fields)
    assert stored.status_code == 200, stored.text
    return {**stored.json(), "request_key": fields["request_key"]}


def test_an_analyst_confirms_and_corrects_and_the_ledger_counts_each_random_item_once(workspace):
    client = _analyst(workspace, "rhea")
    confirmed = _review(client)
    assert all(label["verdict"] == "confirmed" for label in confirmed["labels"].values())
    corrected = _review(client, change={"sentiment": "negative", "mentioned": "true", "mention_count": "2"})
    assert corrected["request_key"] != confirmed["request_key"]  # the queue moved on
    assert corrected["labels"]["sentiment"]["value"] == "negative"
    ledger = client.get(f"/api/accuracy?{SCOPE}").json()
    mentioned = next(row for row in ledger["fields"] if row["field"] == "mentioned")
    assert mentioned["reviewed"] >= 2 and mentioned["basis"] == "shipped"  # under 30: the shipped figure, so labelled
    assert "shipped labelled set" in mentioned["sentence"] and "of the 30 random reviews" in mentioned["sentence"]


def test_the_doubtful_queue_corrects_but_never_enters_the_estimate(workspace):
    client = _analyst(workspace, "dora")
    before = client.get(f"/api/accuracy?{SCOPE}").json()
    page = client.get(f"/review?{SCOPE}&queue=doubtful")
    assert page.status_code == 200
    if 'id="review-form"' not in page.text:
        pytest.skip("no doubtful label in this small warehouse")
    stored = client.post("/api/reviews", data=_dealt(page.text))
    assert stored.status_code == 200, stored.text
    after = client.get(f"/api/accuracy?{SCOPE}").json()
    assert [r["reviewed"] for r in after["fields"]] == [r["reviewed"] for r in before["fields"]]


def test_a_review_of_an_item_no_queue_dealt_is_refused(workspace):
    client = _analyst(workspace, "nico")
    page = client.get(f"/review?{SCOPE}")
    fields = _dealt(page.text)
    other = _analyst(workspace, "otto")  # dealt nothing yet
    refused = other.post("/api/reviews", data={**fields, "csrf": csrf_of(other.get(f"/accuracy?{SCOPE}").text)})
    assert refused.status_code == 400 and "did not deal" in refused.json()["error"]


def test_a_bad_value_names_the_label_and_stores_nothing(workspace):
    client = _analyst(workspace, "bea")
    page = client.get(f"/review?{SCOPE}")
    fields = _dealt(page.text)
    refused = client.post("/api/reviews", data={**fields, "mention_count": "lots"})
    assert refused.status_code == 400 and refused.json()["error"].startswith("mention_count:")
    assert [r for r in workspace.app.state.workspace.reviews.reviews() if r.reviewer == "bea"] == []


def test_a_viewer_reads_the_ledger_but_may_not_review(workspace):
    viewer = workspace.client("vera")
    assert viewer.get(f"/accuracy?{SCOPE}").status_code == 200
    assert viewer.get(f"/review?{SCOPE}").status_code == 403
    csrf = csrf_of(viewer.get(f"/accuracy?{SCOPE}").text)
    refused = viewer.post("/api/reviews", data={"csrf": csrf, "request_key": "x", "brand": BRAND})
    assert refused.status_code == 403 and "analyst" in refused.json()["error"]


def test_every_review_is_in_the_audit_trail(workspace):
    client = _analyst(workspace, "audra")
    stored = _review(client)
    skipped = client.get(f"/review?{SCOPE}")
    client.post("/api/reviews", data={**_dealt(skipped.text), "skip": "true"})
    trail = [(e.actor, e.action, e.subject) for e in workspace.accounts.audit_trail(500)]
    assert ("audra", "review", f"{BRAND} · {stored['request_key']}") in trail
    assert any(actor == "audra" and action == "review_skipped" for actor, action, _ in trail)


def test_two_reviewers_of_the_same_item_are_both_kept_and_their_agreement_reported(workspace):
    first, second = _analyst(workspace, "ada"), _analyst(workspace, "bob")
    one = _review(first)
    two = _review(second, change={"sentiment": "negative", "mentioned": "true", "mention_count": "1"})
    assert one["request_key"] == two["request_key"]  # the same random order for everyone
    agreement = {row["field"]: row for row in first.get(f"/api/accuracy?{SCOPE}").json()["agreement"]}
    assert agreement["sentiment"]["items"] >= 1
