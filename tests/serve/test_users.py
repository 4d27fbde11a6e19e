"""`visibility users`: accounts of the workspace, their passwords and API tokens stored only as
slow salted hashes, each change audited; and a token opening the API as its user."""

import io
import sqlite3

import pytest

from tests.cli import visibility
from visibility_assets.serve.accounts import Accounts


def _with_stdin(monkeypatch, text: str) -> None:
    monkeypatch.setattr("sys.stdin", io.StringIO(text))


def test_add_reads_the_password_from_stdin_and_stores_only_its_hash(visibility_home, monkeypatch):
    _with_stdin(monkeypatch, "a long enough secret\n")
    added = visibility("users", "add", "li.wei@example.com", "--role", "analyst")
    assert added.returncode == 0 and "a long enough secret" not in added.stdout
    listing = visibility("users", "list")
    assert listing.stdout.splitlines() == ["li.wei@example.com\tanalyst\t0 tokens"]
    with sqlite3.connect(visibility_home / "workspace" / "accounts.sqlite") as conn:
        (stored,) = conn.execute("SELECT password_hash FROM users").fetchone()
    assert stored.startswith("$argon2id$") and "a long enough secret" not in stored
    accounts = Accounts.under(visibility_home)
    assert accounts.login("li.wei@example.com", "a long enough secret", "127.0.0.1").role == "analyst"
    assert accounts.login("li.wei@example.com", "wrong", "127.0.0.1") is None


def test_add_without_a_password_generates_one_and_prints_it_once(visibility_home, monkeypatch):
    _with_stdin(monkeypatch, "")
    added = visibility("users", "add", "zhang", "--role", "viewer")
    password = added.stdout.splitlines()[-1].removeprefix("password (shown once): ")
    assert added.returncode == 0 and len(password) >= 16
    assert Accounts.under(visibility_home).login("zhang", password, "10.0.0.1").role == "viewer"


@pytest.mark.parametrize("args, message", [
    (("users", "add", "bad name", "--role", "viewer"), "user name 'bad name'"),
    (("users", "add", "ok", "--role", "viewer"), "at least 8 characters"),
    (("users", "remove", "nobody"), "no user 'nobody'"),
    (("users", "token", "nobody"), "no user 'nobody'"),
])
def test_a_bad_account_request_is_a_clear_error_without_a_traceback(visibility_home, monkeypatch, args, message):
    _with_stdin(monkeypatch, "short\n")
    result = visibility(*args)
    assert result.returncode == 2 and message in result.stderr and "Traceback" not in result.stderr
    assert not Accounts.under(visibility_home).users()  # nothing written


def test_a_role_outside_the_three_is_refused_by_the_parser(visibility_home):
    result = visibility("users", "add", "x", "--role", "root")
    assert result.returncode == 2 and "invalid choice: 'root'" in result.stderr


@pytest.mark.loopback
def test_a_token_opens_the_api_as_its_user_until_the_user_is_removed(workspace):
    workspace.accounts.add("script", "viewer", "script password")
    token = workspace.accounts.new_token("script")
    client = workspace.client()
    headers = {"Authorization": f"Bearer {token}"}
    assert client.get("/api/overview", headers=headers).status_code == 200
    assert client.get("/api/answers", headers=headers).status_code == 403  # a viewer's token
    assert client.get("/api/overview", headers={"Authorization": f"Bearer {token[:-2]}xx"}).status_code == 401
    with sqlite3.connect(workspace.accounts.path) as conn:
        (stored,) = conn.execute("SELECT token_hash FROM tokens WHERE user_name = 'script'").fetchone()
    assert stored.startswith("$argon2id$") and token.split("_", 2)[2] not in stored
    workspace.accounts.remove("script")
    assert client.get("/api/overview", headers=headers).status_code == 401
    actions = [e.action for e in workspace.accounts.audit_trail() if e.subject == "script"]
    assert {"user_added", "token_issued", "user_removed"} <= set(actions)


def test_token_prints_the_token_as_the_last_line(visibility_home, monkeypatch):
    _with_stdin(monkeypatch, "a long enough secret\n")
    visibility("users", "add", "bot", "--role", "viewer")
    printed = visibility("users", "token", "bot")
    token = printed.stdout.splitlines()[-1]
    assert printed.returncode == 0 and token.startswith("vis_")
    assert Accounts.under(visibility_home).token_user(token).name == "bot"
    assert "1 token" in visibility("users", "list").stdout


def test_serve_without_a_warehouse_says_what_to_run_first(visibility_home):
    result = visibility("serve", "--port", "8123")
    assert result.returncode == 2 and "run `visibility demo`" in result.stderr and "Traceback" not in result.stderr


def test_serve_on_a_busy_port_says_so_before_it_claims_to_have_started(visibility_home):
    import socket

    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        result = visibility("serve", "--port", str(taken.getsockname()[1]))
    assert result.returncode == 2 and "cannot listen on 127.0.0.1:" in result.stderr and "in use" in result.stderr
    assert result.stdout == "" and "Traceback" not in result.stderr  # no "workspace: http://..." line
    assert not visibility_home.exists()
