"""Logging in and out: a form with a CSRF token bound to a nonce cookie, attempts limited per
account and per address (serve/accounts.py), each attempt audited."""

from __future__ import annotations

from urllib.parse import urlsplit

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import RedirectResponse, Response
from starlette.routing import Route

from visibility_assets.serve.access import protected
from visibility_assets.serve.workspace import Workspace


def client_address(request: Request) -> str:
    """The client's address: the peer's, or behind a trusted proxy the last X-Forwarded-For hop."""
    peer = request.client.host if request.client else "unknown"
    workspace: Workspace = request.app.state.workspace
    forwarded = request.headers.get("x-forwarded-for")
    if forwarded and peer in workspace.guard.settings.trusted_proxies:
        return forwarded.split(",")[-1].strip() or peer
    return peer


def _safe_next(target: str | None) -> str:
    """Only a path of this site: never another origin (an open redirect)."""
    if not target:
        return "/overview"
    parts = urlsplit(target)
    if parts.scheme or parts.netloc or not target.startswith("/") or target.startswith("//") or "\\" in target:
        return "/overview"
    return target


async def login_page(request: Request) -> Response:
    workspace: Workspace = request.app.state.workspace
    if request.method == "GET":
        return _form(request, workspace, None, 200)
    form = await request.form()
    name, password = str(form.get("name", "")), str(form.get("password", ""))
    target = _safe_next(str(form.get("next", "")))
    if not workspace.guard.login_csrf_ok(request, str(form.get("csrf", ""))):
        workspace.accounts.audit(None, "login_refused", name[:64], client_address(request), "missing or wrong CSRF token")
        return _form(request, workspace, "the form expired: try again", 403, target)
    user = await run_in_threadpool(workspace.accounts.login, name, password, client_address(request))
    if user is None:
        locked = await run_in_threadpool(workspace.accounts.locked, name, client_address(request))
        message = ("too many failed logins: try again in 15 minutes" if locked
                   else "wrong user name or password")
        return _form(request, workspace, message, 429 if locked else 401, target)
    response = RedirectResponse(workspace.url(target), status_code=303)
    workspace.guard.start_session(response, user)
    return response


def _form(request: Request, workspace: Workspace, message: str | None, status: int,
          target: str | None = None) -> Response:
    """The login form; after a failed POST it keeps the page the user was going to."""
    token, cookie = workspace.guard.login_csrf(request)
    response = workspace.page(request, "login.html", {
        "message": message, "login_csrf": token, "next": target or _safe_next(request.query_params.get("next"))},
        status_code=status)
    if cookie:
        workspace.guard.set_login_cookie(response, cookie)
    return response


@protected("viewer")
def logout(request: Request) -> Response:
    workspace: Workspace = request.app.state.workspace
    workspace.accounts.end_sessions(request.state.user.name, client_address(request))  # every browser's
    response = RedirectResponse(workspace.url("/login"), status_code=303)
    workspace.guard.end_session(response)
    return response


def routes() -> list:
    return [Route("/login", login_page, methods=["GET", "POST"]), Route("/logout", logout, methods=["POST"])]
