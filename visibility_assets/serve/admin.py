"""The admin page: the users, the share links, the cost plan, the audit trail, and the ad-hoc `ask` action: a task of the
event queue (events/), which the collection task sensor submits to Dagster as a run of the
nightly job for its partition, like every other task (the run queue, its tags, its priority
and its per-platform limit apply)."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from visibility_assets.core.days import today, yesterday
from visibility_assets.events.detect import adhoc_event
from visibility_assets.events.service import over_budget_message, record_events
from visibility_assets.report.cost_plan import plan_costs, read_history
from visibility_assets.serve.access import protected
from visibility_assets.serve.accounts import ROLES, AccountError, generated_password
from visibility_assets.serve.filters import FilterError, find_brand
from visibility_assets.serve.login import client_address
from visibility_assets.serve.share_links import DEFAULT_DAYS, DEFAULT_EXPIRY, ShareError
from visibility_assets.serve.workspace import Workspace
from visibility_assets.warehouse.resource import WarehouseResource

PLAN_DAYS = 30  # the admin page costs a month of nights
SHARE_DAYS = DEFAULT_DAYS


def _page(request: Request, notice: str | None = None, error: str | None = None, status: int = 200) -> Response:
    workspace: Workspace = request.app.state.workspace
    return workspace.page(request, "admin.html", {
        "users": workspace.accounts.users(), "audit": workspace.accounts.audit_trail(100), "roles": ROLES,
        "platforms": workspace.config.platform_names, "questions": workspace.config.questions,
        "plan": _cost_plan(workspace), "shares": workspace.shares.links(), "share_days": SHARE_DAYS,
        "share_expiry": DEFAULT_EXPIRY, "notice": notice, "error": error}, status_code=status)


def _cost_plan(workspace: Workspace) -> dict:
    """Tonight's cost plan (`visibility plan`), from the warehouse's last days of answers."""
    with workspace.reader.cursor() as conn:
        return plan_costs(workspace.config, read_history(conn, workspace.config, today()), today(), PLAN_DAYS).as_json()


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
    """Queues one question on one platform, one round, for yesterday's partition (Asia/Shanghai):
    a task the collection task sensor launches, not a process of the web server."""
    workspace: Workspace = request.app.state.workspace
    form = _form(request)
    platform, question = form.get("platform", ""), form.get("question", "")
    if platform not in workspace.config.platform_names:
        return _page(request, error=f"unknown platform {platform!r}", status=400)
    if question not in {q.id for q in workspace.config.questions}:
        return _page(request, error=f"unknown question {question!r}", status=400)
    actor, now = request.state.user.name, datetime.now(UTC)
    event = adhoc_event(workspace.config, platform, yesterday(now), [question], None, 1, f"{actor} (workspace)", now,
                        ident=uuid.uuid4().hex)
    plan = record_events(WarehouseResource.from_settings(workspace.reader.settings), workspace.config, [event], now)
    if not plan.new_tasks:
        return _page(request, error=over_budget_message(workspace.config, platform), status=409)
    task = plan.new_tasks[0]
    workspace.accounts.audit(actor, "ask", f"{platform} {question}", client_address(request), f"task {task.task_id}")
    return _page(request, notice=f"task {task.task_id} queued: {question} on {platform} for {task.date}; the"
                                 " collection task sensor submits it as a run of the nightly job (Dagster's run"
                                 " queue and the platform's run limit apply)")


@protected("admin")
def create_share(request: Request) -> Response:
    workspace: Workspace = request.app.state.workspace
    form = _form(request)
    try:
        brand = find_brand(form.get("brand", ""), form.get("category") or None, workspace.config.catalog)
        days = int(form.get("days") or SHARE_DAYS)
        link, token = workspace.shares.create(brand.name, brand.category, days, form.get("expires") or DEFAULT_EXPIRY,
                                              request.state.user.name, client_address(request))
    except (FilterError, ShareError, ValueError) as exc:
        return _page(request, error=f"share link: {exc}", status=400)
    path = workspace.url(f"/s/{token}")
    return _page(request, notice=f"share link {link.link_id} for {brand.name} made; copy it now, it is shown once:"
                                 f" {str(request.base_url).rstrip('/')}{path}")


@protected("admin")
def revoke_share(request: Request) -> Response:
    workspace: Workspace = request.app.state.workspace
    try:
        link = workspace.shares.revoke(_form(request).get("id", ""), request.state.user.name, client_address(request))
    except ShareError as exc:
        return _page(request, error=str(exc), status=400)
    return _page(request, notice=f"share link {link.link_id} ({link.brand}) revoked: it answers 410 from now on")


def _form(request: Request) -> dict[str, str]:
    # protected() has read the form (for its CSRF token): a handler in a thread cannot await it.
    return {key: str(value) if key == "password" else str(value).strip() for key, value in request.state.form.items()}


def routes() -> list:
    return [Route("/admin", admin_page), Route("/admin/users", add_user, methods=["POST"]),
            Route("/admin/users/remove", remove_user, methods=["POST"]), Route("/admin/ask", ask, methods=["POST"]),
            Route("/admin/shares", create_share, methods=["POST"]),
            Route("/admin/shares/revoke", revoke_share, methods=["POST"])]
