"""The workspace's doors: no route without a login, no answer text for a viewer anywhere, no
forged or expired session, no state change without its CSRF token, no password guessing, and
no script from an answer or a brand name."""

import time

import pytest
from itsdangerous import TimestampSigner, URLSafeTimedSerializer
from starlette.routing import Mount, Route

from tests.workspace_lake import DAY, FIRST_DAY, HOSTILE_BRAND, PASSWORD, Workspace, csrf_of, log_in
from visibility_assets.serve.access import PUBLIC_PATHS
from visibility_assets.serve.answer_html import answer_html
from visibility_assets.serve.auth import SESSION_COOKIE
from visibility_assets.serve.workspace import VIEWS
from visibility_assets.warehouse.lake import reading, write_with_retry

pytestmark = pytest.mark.loopback


def _routes(app):
    for route in app.routes:
        if isinstance(route, Route):
            for method in sorted(route.methods - {"HEAD"}):
                yield route, method


def test_every_route_but_the_public_ones_needs_a_login(workspace):
    client = workspace.client()
    checked = 0
    for route, method in _routes(workspace.app):
        if route.path.startswith(PUBLIC_PATHS):
            continue
        assert getattr(route.endpoint, "required_role", None), f"{route.path} declares no role"
        response = client.request(method, route.path + "?brand=阿里云", follow_redirects=False)
        if route.path.startswith(("/api/", "/mcp")):  # a script's or an agent's: no login page to go to
            assert response.status_code == 401 and "answer_text" not in response.text, route.path
        else:
            assert response.status_code == 303 and response.headers["location"].startswith("/login"), route.path
        checked += 1
    assert checked >= 2 * len(VIEWS) + 5  # pages, their JSON, home, logout, admin's four
    assert {type(r) for r in workspace.app.routes} == {Route, Mount}  # nothing routed another way


def _answer_texts(workspace) -> list[str]:
    with reading(workspace.lake) as conn:
        texts = [t for (t,) in conn.execute("SELECT answer_text FROM raw_ai_responses WHERE length(answer_text) > 80"
                                            " ORDER BY request_key LIMIT 40").fetchall()]
    return [" ".join(t.split())[20:60] for t in texts]  # a stretch of each, past any shared opening


def test_a_viewer_sees_no_answer_text_in_any_page_json_or_export(workspace):
    client = workspace.client("vera")
    excerpts = _answer_texts(workspace)
    scope = f"from={FIRST_DAY}&to={DAY}"
    seen = 0
    for name in VIEWS:
        responses = [client.get(f"/{name}?{scope}"), client.get(f"/api/{name}?{scope}")]
        if responses[1].status_code == 200:
            tables = [k for k, v in responses[1].json().items() if isinstance(v, list)]
            responses += [client.get(f"/api/{name}?{scope}&format=csv&table={t}") for t in tables]
        for response in responses:
            text = " ".join(response.text.split())
            assert not any(excerpt in text for excerpt in excerpts), (name, response.url)
            seen += 1
    assert client.get(f"/answers?{scope}").status_code == 403
    assert client.get(f"/api/answers?{scope}").status_code == 403
    assert client.get(f"/api/answers?{scope}&format=csv").status_code == 403
    # the same requests as an analyst do show the text: the excerpts are real
    analyst = " ".join(workspace.client("ana").get(f"/api/answers?{scope}&platform=deepseek").text.split())
    assert seen > len(VIEWS) and any(excerpt in analyst for excerpt in excerpts)


def test_a_forged_or_expired_session_cookie_is_no_session(workspace):
    client = workspace.client("ana")
    good = client.cookies.get(SESSION_COOKIE)
    assert client.get("/overview", follow_redirects=False).status_code == 200
    forged = URLSafeTimedSerializer(b"another secret", salt="vis-session").dumps(["adam", "x"])
    tampered = good[:-3] + ("aaa" if not good.endswith("aaa") else "bbb")

    class IssuedYesterday(TimestampSigner):
        def get_timestamp(self):
            return int(time.time()) - 24 * 3600

    expired = URLSafeTimedSerializer(workspace.settings.secret, salt="vis-session", signer=IssuedYesterday).dumps(
        ["ana", "x"])
    for value in (forged, tampered, expired, "", "garbage"):
        browser = workspace.client()
        browser.cookies.set(SESSION_COOKIE, value)
        assert browser.get("/overview", follow_redirects=False).status_code == 303
        assert browser.get("/api/overview").status_code == 401


def test_a_state_change_without_its_csrf_token_is_refused(workspace):
    admin = workspace.client("adam")
    for token in (None, "wrong"):
        data = {"name": "mallory", "role": "admin", "password": "long enough pw"}
        if token:
            data["csrf"] = token
        assert admin.post("/admin/users", data=data).status_code == 403
        assert admin.post("/logout", data={"csrf": token} if token else {}).status_code == 403
    assert workspace.accounts.user("mallory") is None
    assert admin.get("/overview", follow_redirects=False).status_code == 200  # still logged in
    page = admin.get("/admin").text
    response = admin.post("/logout", data={"csrf": csrf_of(page)}, follow_redirects=False)
    assert response.status_code == 303 and admin.get("/overview", follow_redirects=False).status_code == 303
    browser = workspace.client()
    refused = browser.post("/login", data={"name": "ana", "password": PASSWORD, "next": "/overview"},
                           follow_redirects=False)
    assert refused.status_code == 403 and SESSION_COOKIE not in refused.cookies


def test_twenty_wrong_passwords_lock_the_account_and_each_is_audited(workspace, tmp_path):
    own = Workspace(tmp_path, workspace.config, workspace.lake)  # its own accounts: the lock must not spill
    own.accounts.add("target", "analyst", PASSWORD)
    browser = own.client()
    statuses = [log_in(browser, "target", f"guess {i}").status_code for i in range(20)]
    assert statuses[:4] == [401] * 4 and set(statuses[4:]) == {429}  # the fifth failure locks
    assert log_in(browser, "target", PASSWORD).status_code == 429  # the right password, too late
    trail = [e for e in own.accounts.audit_trail() if e.subject == "target" and e.action.startswith("login")]
    assert len(trail) == 21 and {e.action for e in trail} == {"login_failed", "login_locked"}
    assert sum(e.action == "login_failed" for e in trail) == 5


def test_an_answer_holding_markup_is_shown_inert(workspace):
    hostile = ("推荐阿里云。<script>alert(1)</script> <img src=x onerror=alert(2)> "
               "[click](javascript:alert(3)) ![pixel](http://tracker.example/p.png) "
               '<a href="http://evil.example" onclick="x()">x</a> **阿里云** is fine')
    with reading(workspace.lake) as conn:
        key = conn.execute("SELECT request_key FROM sample_brand_results WHERE brand = '阿里云' AND platform ="
                           " 'deepseek' AND date = ? AND mentioned ORDER BY request_key LIMIT 1",
                           [FIRST_DAY]).fetchone()[0]
        before = conn.execute("FROM lake.current_snapshot()").fetchone()[0]
        original = conn.execute("SELECT answer_text FROM raw_ai_responses WHERE request_key = ?", [key]).fetchone()[0]
    write_with_retry(workspace.lake, lambda conn: conn.execute(
        "UPDATE raw_ai_responses SET answer_text = $text WHERE request_key = $key", {"text": hostile, "key": key}))
    cell = f"from={FIRST_DAY}&to={FIRST_DAY}&platform=deepseek&named=yes"
    page = workspace.client("ana").get(f"/answers?{cell}").text
    assert key in page
    # as_of: the answers as the warehouse held them before the change
    then = workspace.client("ana").get(f"/api/answers?{cell}&as_of={before}").json()
    assert then["snapshot"] == before and [a["answer_text"] for a in then["answers"] if a["request_key"] == key] == [
        original]
    body = page[page.index("<main>"):]
    for active in ("<script", "<img", "onerror=", "onclick=", 'href="javascript:', 'src="http://tracker'):
        assert active not in body, active  # the markdown image is at most a link: nothing is fetched
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in body  # shown as text
    assert "script-src 'self'" in workspace.client("ana").get("/overview").headers["content-security-policy"]


def test_markdown_is_rendered_and_matches_highlighted_without_letting_markup_through():
    text = "## 推荐\n\n1. **阿里云** [官网](https://aliyun.com)\n2. 华为云\n\n<b onmouseover=x>raw</b>"
    ali, hua = text.index("阿里云"), text.index("华为")
    matches = [{"brand": "阿里云", "start_pos": ali, "end_pos": ali + 3, "accepted": True, "rule": None},
               {"brand": "华为", "start_pos": hua, "end_pos": hua + 2, "accepted": False, "rule": "prefix_of_tracked_alias"}]
    html = answer_html(text, matches)
    assert "<h2>推荐</h2>" in html and '<a href="https://aliyun.com" rel="noopener noreferrer nofollow">' in html
    assert '<mark class="match accepted" data-match="0" title="阿里云: counted">阿里云</mark>' in html
    assert 'class="match accepted focus"' in answer_html(text, matches, focus="阿里云")
    assert 'class="match rejected"' in html and "prefix_of_tracked_alias" in html
    assert "&lt;b onmouseover=x&gt;raw&lt;/b&gt;" in html and "<b " not in html
    assert answer_html("\ue000" + "0\ue001x\ue002 [a](http://x.example/\ue0000\ue001y)", []).count("<mark") == 0


def test_a_brand_name_of_quotes_sql_and_html_is_only_ever_a_value(workspace):
    client = workspace.client("vera")
    for path in ("/api/overview", "/api/competitors", "/api/questions", "/api/sources"):
        response = client.get(path, params={"brand": HOSTILE_BRAND, "category": "cloud"})
        assert response.status_code == 200 and response.json()["filters"]["brand"] == HOSTILE_BRAND, path
    page = client.get("/overview", params={"brand": HOSTILE_BRAND}).text
    assert "<b>bold</b>" not in page and "&lt;b&gt;bold&lt;/b&gt;" in page
    unknown = client.get("/api/overview", params={"brand": "x' OR '1'='1"})
    assert unknown.status_code == 400 and "unknown brand" in unknown.json()["error"]
    with reading(workspace.lake) as conn:
        assert conn.execute("SELECT count(*) FROM mention_metrics").fetchone()[0] > 0  # still there


def test_the_admin_page_and_actions_are_for_admins_and_check_what_they_are_given(workspace):
    analyst, admin = workspace.client("ana"), workspace.client("adam")
    token = csrf_of(analyst.get("/overview").text)
    assert analyst.get("/admin").status_code == 403
    assert analyst.post("/admin/users", data={"csrf": token, "name": "eve", "role": "admin",
                                              "password": "long enough pw"}).status_code == 403
    assert workspace.accounts.user("eve") is None
    page = admin.get("/admin")
    assert page.status_code == 200 and "vera" in page.text
    token = csrf_of(page.text)
    refused = admin.post("/admin/ask", data={"csrf": token, "platform": "grok", "question": "q001"})
    assert refused.status_code == 400 and "unknown platform" in refused.text
    added = admin.post("/admin/users", data={"csrf": token, "name": "new.viewer", "role": "viewer", "password": ""})
    assert added.status_code == 200 and "password (shown once)" in added.text
    assert workspace.accounts.user("new.viewer").role == "viewer"
    assert any(e.action == "user_added" and e.actor == "adam" for e in workspace.accounts.audit_trail())


def test_a_user_header_is_believed_only_from_a_trusted_proxy_and_only_for_an_existing_user(workspace, tmp_path):
    from dataclasses import replace

    from starlette.testclient import TestClient

    from visibility_assets.serve.app import create_app

    settings = replace(workspace.settings, trusted_proxies=("10.0.0.7",), user_header="X-Forwarded-User")
    app = create_app(settings, workspace.config, workspace.lake)
    via_proxy = TestClient(app, base_url="http://workspace.test", client=("10.0.0.7", 443))
    elsewhere = TestClient(app, base_url="http://workspace.test", client=("192.0.2.9", 443))
    assert via_proxy.get("/api/answers", headers={"X-Forwarded-User": "ana"}).status_code == 200
    assert via_proxy.get("/api/answers", headers={"X-Forwarded-User": "vera"}).status_code == 403  # her role
    assert via_proxy.get("/api/overview", headers={"X-Forwarded-User": "nobody"}).status_code == 401
    assert elsewhere.get("/api/overview", headers={"X-Forwarded-User": "adam"}).status_code == 401
    twice = [("X-Forwarded-User", "adam"), ("X-Forwarded-User", "vera")]  # the client's, then the proxy's
    assert via_proxy.get("/api/overview", headers=twice).status_code == 401
    # an admin behind the proxy can use the forms: its page carries a session's CSRF token
    page = via_proxy.get("/admin", headers={"X-Forwarded-User": "adam"})
    assert page.status_code == 200 and "vis_session" in page.headers.get("set-cookie", "")
    added = via_proxy.post("/admin/users", headers={"X-Forwarded-User": "adam"},
                           data={"csrf": csrf_of(page.text), "name": "via.sso", "role": "viewer", "password": ""})
    assert added.status_code == 200 and workspace.accounts.user("via.sso") is not None


def test_an_answer_cannot_forge_a_highlight_nor_break_the_page_with_marker_characters():
    forged = "&#xE000;0&#xE001;FAKE&#xE002; &#xE000;999&#xE001;x \ue000" + "0\ue001y\ue002 阿里云"
    start = forged.index("阿里云")
    html = answer_html(forged, [{"brand": "阿里云", "start_pos": start, "end_pos": start + 3, "accepted": True,
                                 "rule": None}])
    assert html.count("<mark") == 1 and ">阿里云</mark>" in html and "FAKE" in html
    assert not any(c in html for c in "\ue000\ue001\ue002")


def test_logging_out_ends_the_session_everywhere_a_copied_cookie_too(workspace, tmp_path):
    own = Workspace(tmp_path, workspace.config, workspace.lake)
    own.accounts.add("leaver", "analyst", PASSWORD)
    browser = own.client("leaver")
    copied = browser.cookies.get(SESSION_COOKIE)
    assert browser.post("/logout", data={"csrf": csrf_of(browser.get("/overview").text)},
                        follow_redirects=False).status_code == 303
    thief = own.client()
    thief.cookies.set(SESSION_COOKIE, copied)
    assert thief.get("/api/overview").status_code == 401
    assert own.client("leaver").get("/api/overview").status_code == 200  # a new login works


def test_logins_racing_each_other_get_no_more_guesses_than_the_limit(tmp_path):
    from concurrent.futures import ThreadPoolExecutor

    from visibility_assets.serve.accounts import MAX_FAILURES_PER_ACCOUNT, Accounts

    accounts = Accounts.under(tmp_path)
    accounts.add("raced", "viewer", PASSWORD)
    with ThreadPoolExecutor(12) as pool:
        results = list(pool.map(lambda i: accounts.login("raced", f"guess {i}", f"10.0.0.{i}"), range(12)))
    assert results == [None] * 12
    failed = [e for e in accounts.audit_trail() if e.action == "login_failed"]
    assert len(failed) == MAX_FAILURES_PER_ACCOUNT  # the others were refused before any password check


def test_odd_requests_get_clear_answers_and_pages_are_not_cached(workspace):
    client = workspace.client("ana")
    huge = client.get("/api/answers?offset=99999999999999999999")
    assert huge.status_code == 400 and "offset" in huge.json()["error"]
    assert client.get("/overview").headers["cache-control"] == "no-store"
    assert "no-store" not in client.get("/static/app.js").headers.get("cache-control", "")
    long_name = "x" * 5000
    assert workspace.client().post("/login", data={"name": long_name, "password": "p"}).status_code == 403


def test_the_pages_load_nothing_from_elsewhere():
    """Scripts, styles and fonts come from the package: no template, script or style names
    another origin (ECharts' own URLs are XML namespaces and licence links, never loaded)."""
    from pathlib import Path

    import visibility_assets.serve as serve

    root = Path(serve.__file__).parent
    for path in [*root.glob("templates/*.html"), root / "static" / "app.js", root / "static" / "app.css"]:
        text = path.read_text(encoding="utf-8")
        assert "://" not in text.replace("data:,", ""), path.name
    assert "fonts.googleapis" not in (root / "static" / "echarts.min.js").read_text(encoding="utf-8")
