"""What a share link opens, without a login: /s/TOKEN is its brand's overview, /s/TOKEN/VIEW and
/s/TOKEN/api/VIEW (JSON, CSV) its shared views (share_links.SHARED_VIEWS), at viewer level.
Another brand, another view, the answers and the admin pages through it are 403; an unknown
token 404; a revoked or expired link 410. Every use, and every refusal, is in the audit trail.
The token is checked on every request, so a revocation counts at once."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from visibility_assets.serve.accounts import User
from visibility_assets.serve.login import client_address
from visibility_assets.serve.share_links import SHARED_VIEWS, ShareLink
from visibility_assets.serve.workspace import VIEWS, ViewCall, ViewError, Workspace, api_response

ROBOTS = {"x-robots-tag": "noindex, nofollow"}  # a link pasted somewhere public stays out of search engines


@dataclass(frozen=True)
class SharedPage:
    """What the templates need to draw a page opened by a link: its views and its URLs."""
    link: ShareLink
    root: str  # the workspace's root path
    token: str

    @property
    def views(self) -> list:
        return [VIEWS[name] for name in SHARED_VIEWS]

    @property
    def expires(self) -> str:
        return datetime.fromtimestamp(self.link.expires_at, UTC).strftime("%Y-%m-%d %H:%M UTC")

    def url(self, path: str) -> str:
        """A path of the workspace as seen through the link (the static files are everyone's)."""
        return self.root + path if path.startswith("/static/") else f"{self.root}/s/{self.token}{path}"


def shared(request: Request) -> Response:
    workspace: Workspace = request.app.state.workspace
    token, rest = request.path_params["token"], request.path_params.get("rest", "").strip("/")
    api = rest == "api" or rest.startswith("api/")
    name = rest[4:] if api else (rest or "overview")
    link = workspace.shares.find(token)
    if link is None:
        return _refused(workspace, request, api, 404, "no such share link: ask whoever sent it for a new one")
    where = client_address(request)
    subject = f"{link.link_id} {link.brand}"
    state = link.state()
    if state != "active":
        workspace.accounts.audit(None, "share_refused", subject, where, f"{rest or 'overview'}: link {state}")
        return _refused(workspace, request, api, 410, f"this share link is {state}: ask whoever sent it for a new one")
    query = dict(request.query_params)
    other = [key for key in ("brand", "category") if query.get(key, getattr(link, key)) != getattr(link, key)]
    if name not in SHARED_VIEWS or other:
        what = f"another {other[0]}" if other else f"/{rest}"
        workspace.accounts.audit(None, "share_refused", subject, where, what)
        return _refused(workspace, request, api, 403, f"this link shows only {link.brand}'s"
                        f" {', '.join(SHARED_VIEWS)}: {what} is not shared")
    workspace.accounts.audit(None, "share_used", subject, where, rest or "overview")
    request.state.user = user = User(f"shared link {link.link_id}", "viewer")
    query.update(brand=link.brand, category=link.category)
    page = SharedPage(link, workspace.root_path, token)
    try:
        data = workspace.view_data(name, ViewCall(query, user, workspace.reviews, link.days))
    except ViewError as exc:
        return _refused(workspace, request, api, exc.status, str(exc), page)
    response = (api_response(name, request, data) if api else
                workspace.page(request, f"{name}.html", {**data, "share": page, "url": page.url}))
    response.headers.update(ROBOTS)
    return response


def _refused(workspace: Workspace, request: Request, api: bool, status: int, message: str,
             page: SharedPage | None = None) -> Response:
    if api:
        return JSONResponse({"error": message}, status_code=status, headers=ROBOTS)
    context = {"message": message, "share": page, **({"url": page.url} if page else {})}
    response = workspace.page(request, "shared_refused.html", context, status_code=status)
    response.headers.update(ROBOTS)
    return response


async def shared_endpoint(request: Request) -> Response:
    return await run_in_threadpool(shared, request)


def routes() -> list:
    return [Route("/s/{token}", shared_endpoint), Route("/s/{token}/{rest:path}", shared_endpoint)]
