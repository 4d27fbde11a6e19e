"""The admin page: the users, the audit trail, and the ad-hoc `ask` action (a `visibility ask`
started in its own process, its output kept under the data directory)."""

from __future__ import annotations

import os
import subprocess
import sys
import time

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from visibility_assets.serve.access import protected
from visibility_assets.serve.accounts import ROLES, AccountError, generated_password
from visibility_assets.serve.login import client_address
from visibility_assets.serve.workspace import Workspace


def _page(request: Request, notice: str | None = None, error: str | None = None, status: int = 200) -> Response:
    workspace: Workspace = request.app.state.workspace
    return workspace.page(request, "admin.html", {
        "users": workspace.accounts.users(), "audit": workspace.accounts.audit_trail(100), "roles": ROLES,
        "platforms": workspace.config.platform_names, "questions": workspace.config.questions,
        "notice": notice, "error": error}, status_code=status)


@protected("admin")
def admin_page(request: Request) -> Response:
    return _page(request)


@protected("admin")
def add_user(request: Request) -> Response:
    workspace: Workspace = request.app.state.workspace
    form = _form(request)
    password = form.get("password") or generated_password()
    try:
        user = workspace.accounts.add(form.get("name", ""), form.get("role", ""), password,
                                      actor=request.state.user.name)
    except AccountError as exc:
        return _page(request, error=str(exc), status=400)
    shown = "" if form.get("password") else f"; its password (shown once): {password}"
    return _page(request, notice=f"user {user.name} added as {user.role}{shown}")


@protected("admin")
def remove_user(request: Request) -> Response:
    workspace: Workspace = request.app.state.workspace
    name = _form(request).get("name", "")
    if name == request.state.user.name:
        return _page(request, error="an admin cannot remove itself here (use `visibility users remove`)", status=400)
    try:
        workspace.accounts.remove(name, actor=request.state.user.name)
    except AccountError as exc:
        return _page(request, error=str(exc), status=400)
    return _page(request, notice=f"user {name} removed")


@protected("admin")
def ask(request: Request) -> Response:
    """Starts `visibility ask` for a platform and questions; the run is the CLI's, with its
    budget and its locks."""
    workspace: Workspace = request.app.state.workspace
    form = _form(request)
    platform, question = form.get("platform", ""), form.get("question", "")
    if platform not in workspace.config.platform_names:
        return _page(request, error=f"unknown platform {platform!r}", status=400)
    if question not in {q.id for q in workspace.config.questions}:
        return _page(request, error=f"unknown question {question!r}", status=400)
    logs = workspace.guard.settings.home / "workspace" / "asks"
    logs.mkdir(parents=True, exist_ok=True)
    log = logs / f"{time.strftime('%Y%m%dT%H%M%S')}-{platform}-{question}.log"
    command = [sys.executable, "-m", "visibility_assets.cli", "--config-dir", str(workspace.config.directory),
               "ask", "--platform", platform, "--question", question]
    with open(log, "wb") as out:
        subprocess.Popen(command, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                         env=dict(os.environ), start_new_session=True)
    workspace.accounts.audit(request.state.user.name, "ask", f"{platform} {question}", client_address(request),
                             f"log {log}")
    return _page(request, notice=f"asking {platform} question {question} now; its output goes to {log}")


def _form(request: Request) -> dict[str, str]:
    # protected() has read the form (for its CSRF token): a handler in a thread cannot await it.
    return {key: str(value) if key == "password" else str(value).strip() for key, value in request.state.form.items()}


def routes() -> list:
    return [Route("/admin", admin_page), Route("/admin/users", add_user, methods=["POST"]),
            Route("/admin/users/remove", remove_user, methods=["POST"]), Route("/admin/ask", ask, methods=["POST"])]
