"""Share links: a brand's overview, competitors and questions for someone without an account,
read-only at viewer level; nothing else through the link; 410 once revoked or expired; every
use in the audit trail; the token kept only as a hash."""

from __future__ import annotations

import os
import sqlite3
import time
from pathlib import Path

import pytest

from tests.cli import visibility
from tests.serve.test_workspace_browser import _shot, browser, served  # noqa: F401 (fixtures)
from tests.workspace_lake import DAY, FIRST_DAY

pytestmark = pytest.mark.slow
BRAND = "阿里云"


@pytest.fixture
def share(workspace, monkeypatch):
    """`visibility share ARGS` against the workspace's data directory and config."""
    monkeypatch.setenv("VISIBILITY_HOME", str(workspace.home))
    monkeypatch.setenv("VISIBILITY_CONFIG_DIR", str(workspace.config.directory))
    monkeypatch.delenv("VISIBILITY_SERVE_URL", raising=False)
    return lambda *args: visibility("share", *args)


def _made(share, *args: str) -> tuple[str, str]:
    done = share("create", "--brand", BRAND, *args)
    assert done.returncode == 0, done.stderr
    path = done.stdout.strip().splitlines()[-1]
    assert path.startswith("/s/")
    link_id = done.stdout.split()[2].rstrip(":")
    return link_id, path


def _audit(workspace, link_id: str) -> list[tuple[str, str]]:
    return [(entry.action, entry.detail or "") for entry in workspace.accounts.audit_trail(500)
            if (entry.subject or "").startswith(link_id)]


def test_a_link_opens_its_brands_views_without_a_login_and_nothing_else(workspace, share):
    link_id, path = _made(share, "--days", "5")
    client = workspace.client()  # no login
    scope = f"from={FIRST_DAY}&to={DAY}"
    overview = client.get(path)
    assert overview.status_code == 200 and f"Shared view of {BRAND}" in overview.text
    assert overview.headers["x-robots-tag"].startswith("noindex")
    assert f'href="{path}/competitors' in overview.text and "/admin" not in overview.text
    for view in ("overview", "competitors", "questions"):
        assert client.get(f"{path}/{view}?{scope}").status_code == 200, view
    # the link's JSON is the workspace's own for that brand, period and snapshot
    shared = client.get(f"{path}/api/overview?{scope}").json()
    logged_in = workspace.client("vera").get(f"/api/overview?brand={BRAND}&{scope}").json()
    assert shared == logged_in
    assert client.get(f"{path}/api/overview").json()["filters"]["from"] == shared["filters"]["from"]  # 5 days
    assert client.get(f"{path}/api/questions?{scope}&format=csv&table=gaps").status_code == 200
    refused = {target: client.get(f"{path}{target}") for target in (
        "/answers", "/api/answers", "/admin", "/sources", "/review", "/overview?brand=腾讯云",
        "/api/competitors?category=phone")}
    assert {target: r.status_code for target, r in refused.items()} == dict.fromkeys(refused, 403)
    assert "only 阿里云" in refused["/answers"].text and "answer_text" not in refused["/api/answers"].text
    # the link gives no session: the workspace's own pages still want a login
    assert client.get("/answers", follow_redirects=False).status_code == 303
    assert client.get("/api/overview").status_code == 401
    actions = [action for action, _ in _audit(workspace, link_id)]
    assert actions.count("share_used") == 7 and actions.count("share_refused") == 7 and "share_created" in actions


def test_a_revoked_link_answers_410_and_its_token_is_stored_only_as_a_hash(workspace, share):
    link_id, path = _made(share)
    client = workspace.client()
    assert client.get(path).status_code == 200
    listed = share("list")
    assert any(line.split("\t")[:2] == [link_id, BRAND] and "\tactive\t" in line for line in listed.stdout.splitlines())
    revoked = share("revoke", link_id)
    assert revoked.returncode == 0 and "410" in revoked.stdout
    assert client.get(path).status_code == 410 and client.get(f"{path}/api/overview").status_code == 410
    assert "\trevoked\t" in next(line for line in share("list").stdout.splitlines() if line.startswith(link_id))
    assert [a for a, _ in _audit(workspace, link_id)][:3] == ["share_refused", "share_refused", "share_revoked"]  # newest first
    token = path.rsplit("/", 1)[1]
    with sqlite3.connect(workspace.accounts.path) as conn:
        stored = "\n".join(str(row) for row in conn.execute("SELECT * FROM share_links"))
    assert token not in stored and link_id in stored
    assert client.get("/s/" + "x" * 43).status_code == 404


def test_an_expired_link_answers_410(workspace, share):
    link_id, path = _made(share, "--expires", "1h")
    with sqlite3.connect(workspace.accounts.path) as conn:  # an hour later
        conn.execute("UPDATE share_links SET expires_at = ? WHERE link_id = ?", (time.time() - 1, link_id))
    response = workspace.client().get(path)
    assert response.status_code == 410 and "expired" in response.text


def test_bad_arguments_are_one_line_and_exit_2(workspace, share):
    for args, message in ((("--brand", "No Such"), "unknown brand"), (("--brand", BRAND, "--expires", "soon"), "expires"),
                          (("--brand", BRAND, "--expires", "400d"), "at most 366 days")):
        done = share("create", *args)
        assert done.returncode == 2 and message in done.stderr and "Traceback" not in done.stderr, args
    assert share("revoke", "nosuchid").returncode == 2


def test_the_link_is_a_full_url_when_the_workspace_address_is_known(workspace, share, monkeypatch):
    monkeypatch.setenv("VISIBILITY_SERVE_URL", "https://visibility.example.com/")
    done = share("create", "--brand", BRAND)
    assert done.stdout.strip().splitlines()[-1].startswith("https://visibility.example.com/s/")


@pytest.mark.long
def test_a_link_opens_the_overview_in_a_browser_without_a_login(workspace, served, browser, tmp_path):  # noqa: F811
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

    from visibility_assets.serve.share_links import ShareLinks

    link, token = ShareLinks(workspace.accounts).create(BRAND, "cloud", 5, "1d", "test")
    browser.delete_all_cookies()
    browser.get(f"{served}/s/{token}")
    assert browser.find_element(By.TAG_NAME, "h1").text.startswith(BRAND)
    assert "Shared view of" in browser.find_element(By.CSS_SELECTOR, ".shared-note").text
    assert browser.find_elements(By.CSS_SELECTOR, "#figures tbody tr")
    WebDriverWait(browser, 20).until(  # the scripts load through the link too: the chart is drawn
        lambda d: d.execute_script("return !!document.querySelector('#trend-chart canvas')"))
    assert not browser.get_cookies()  # nothing to log in with was handed out
    shots = Path(os.environ.get("VISIBILITY_SCREENSHOTS") or tmp_path)
    shots.mkdir(parents=True, exist_ok=True)
    assert _shot(browser, "shared-overview", shots).stat().st_size > 10_000
    errors = [e for e in browser.get_log("browser") if e["level"] == "SEVERE" and e["source"] != "network"]
    assert not errors, errors
    browser.get(f"{served}/s/{token}/answers")
    assert "not shared" in browser.find_element(By.TAG_NAME, "main").text
    ShareLinks(workspace.accounts).revoke(link.link_id, "test")
    browser.get(f"{served}/s/{token}")
    assert "revoked" in browser.find_element(By.TAG_NAME, "main").text


def test_an_admin_makes_and_revokes_a_link_on_the_admin_page_which_shows_the_cost_plan(workspace):
    import re

    from tests.workspace_lake import csrf_of

    admin = workspace.client("adam")
    page = admin.get("/admin")
    assert 'id="shares"' in page.text and 'id="cost-plan"' in page.text
    plan_rows = re.findall(r"<tr><td>([a-z]+)</td>", page.text.split('id="cost-plan"')[1])
    assert {"deepseek", "kimi"} <= set(plan_rows)
    made = admin.post("/admin/shares", data={"csrf": csrf_of(page.text), "brand": BRAND, "days": "7",
                                             "expires": "2d"})
    assert made.status_code == 200 and "shown once" in made.text
    path = "/s/" + re.search(r"/s/([A-Za-z0-9_-]{20,})", made.text).group(1)
    assert workspace.client().get(path).status_code == 200
    link_id = re.search(r"share link ([0-9a-f]{8}) for", made.text).group(1)
    revoked = admin.post("/admin/shares/revoke", data={"csrf": csrf_of(made.text), "id": link_id})
    assert revoked.status_code == 200 and "revoked" in revoked.text
    assert workspace.client().get(path).status_code == 410
    bad = admin.post("/admin/shares", data={"csrf": csrf_of(revoked.text), "brand": BRAND, "expires": "forever"})
    assert bad.status_code == 400 and "expires" in bad.text
    viewer = workspace.client("vera")
    assert viewer.post("/admin/shares", data={"csrf": csrf_of(viewer.get("/overview").text),
                                              "brand": BRAND}).status_code == 403
