"""The workspace's ASGI application (Starlette): its routes, each page and its JSON twin under
/api/ built from the same view data (serve/workspace.py), and the security headers."""

from __future__ import annotations

import os
import time
from contextlib import asynccontextmanager

from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import JSONResponse, PlainTextResponse, RedirectResponse, Response
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from visibility_assets.config import VisibilityConfig, load_config
from visibility_assets.measure.project import load_project
from visibility_assets.review.store import ReviewStore
from visibility_assets.serve import admin, login, reviewing, sharing
from visibility_assets.serve.access import protected
from visibility_assets.serve.accounts import Accounts
from visibility_assets.serve.auth import Guard
from visibility_assets.serve.mcp_http import McpEndpoint
from visibility_assets.serve.reader import WorkspaceReader
from visibility_assets.serve.settings import ServeSettings
from visibility_assets.serve.workspace import VIEWS, ViewCall, ViewError, Workspace, api_response, static_dir
from visibility_assets.warehouse.lake import LakeSettings, lake_settings

# Scripts and styles come only from the package; an answer's markup can run nothing.
CSP = ("default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; "
       "object-src 'none'; base-uri 'none'; frame-ancestors 'none'; form-action 'self'")
SECURITY_HEADERS = [(b"content-security-policy", CSP.encode()), (b"x-content-type-options", b"nosniff"),
                    (b"referrer-policy", b"same-origin"), (b"x-frame-options", b"DENY")]


def view_route(name: str, api: bool):
    """The page of view `name`, or its JSON and CSV twin under /api/: one path to the data."""
    def handler(request: Request) -> Response:
        workspace: Workspace = request.app.state.workspace
        try:
            data = workspace.view_data(name, ViewCall.of(request))
        except ViewError as exc:
            if api:
                return JSONResponse({"error": str(exc)}, status_code=exc.status)
            return workspace.page(request, "error.html", {"message": str(exc), "view": name}, exc.status)
        return api_response(name, request, data) if api else workspace.page(request, f"{name}.html", data)
    handler.__name__ = f"{name}_{'api' if api else 'page'}"
    return protected(VIEWS[name].role, api=api)(handler)


def home(request: Request) -> Response:
    return RedirectResponse(request.app.state.workspace.url("/overview"), status_code=303)


def healthz(request: Request) -> Response:
    return PlainTextResponse("ok")


def routes() -> list:
    pages = [Route(f"/{name}", view_route(name, api=False)) for name in VIEWS]
    apis = [Route(f"/api/{name}", view_route(name, api=True)) for name in VIEWS]
    return [Route("/", protected("viewer")(home)), *pages, *apis, *login.routes(), *admin.routes(), *reviewing.routes(), *sharing.routes(),
            Route("/healthz", healthz), Mount("/static", StaticFiles(directory=static_dir()), name="static")]


class ResponseHeaders:
    """The security headers on every response, and `Server-Timing: app;dur=MS`: the time the
    app took to start its answer (what `visibility bench serve` reports as server time)."""

    def __init__(self, app: ASGIApp):
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started = time.perf_counter()

        async def with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                took = f"app;dur={(time.perf_counter() - started) * 1000:.1f}".encode()
                headers = [*message.get("headers", []), *SECURITY_HEADERS, (b"server-timing", took)]
                if not scope["path"].startswith("/static/"):
                    headers.append((b"cache-control", b"no-store"))  # answers and passwords stay off disks
                message["headers"] = headers
            await send(message)
        await self.app(scope, receive, with_headers)


def create_app(settings: ServeSettings | None = None, config: VisibilityConfig | None = None,
               lake: LakeSettings | None = None, root_path: str = "") -> Starlette:
    workspace = build_workspace(settings, config, lake, root_path)
    mcp = McpEndpoint(workspace)

    @asynccontextmanager
    async def lifespan(app):
        await run_in_threadpool(workspace.warm_up)
        async with mcp.running():
            yield

    app = Starlette(routes=[*routes(), Route("/mcp", mcp, methods=["GET", "POST", "DELETE"])],
                    middleware=[Middleware(ResponseHeaders)], lifespan=lifespan)
    app.state.workspace = workspace
    return app


def build_workspace(settings: ServeSettings | None = None, config: VisibilityConfig | None = None,
                    lake: LakeSettings | None = None, root_path: str = "") -> Workspace:
    """What the app and `visibility mcp` serve: the settings and config from the environment by default."""
    settings = settings or ServeSettings.from_env()
    config = config or load_config()
    accounts = Accounts.under(settings.home)
    return Workspace(config, WorkspaceReader(lake or lake_settings(), load_project().macros), accounts,
                     Guard(settings, accounts), ReviewStore.under(settings.home), root_path)


def app_from_env() -> Starlette:
    """The factory `visibility serve` gives uvicorn: each worker process builds its app."""
    return create_app(root_path=os.environ.get("VISIBILITY_SERVE_ROOT_PATH", ""))
