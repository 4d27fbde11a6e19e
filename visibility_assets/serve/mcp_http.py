"""The MCP tools as streamable HTTP at /mcp under `visibility serve`: stateless (each POST is
answered on its own, so any worker process may take it) and JSON-answered. A request without a
valid `Authorization: Bearer` token gets 401 before the protocol starts: no token, no tools."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
from starlette.concurrency import run_in_threadpool
from starlette.responses import JSONResponse
from starlette.types import Receive, Scope, Send

from visibility_assets.serve.accounts import User
from visibility_assets.serve.mcp_tools import mcp_server
from visibility_assets.serve.workspace import Workspace


def bearer_token(authorization: str | None) -> str | None:
    if authorization and authorization[:7].lower() == "bearer ":
        return authorization[7:].strip() or None
    return None


class McpEndpoint:
    """The ASGI app of /mcp; it answers while `running()` is entered (in the app's lifespan)."""

    required_role = "viewer"  # the least a token's user needs; each tool asks its view's own role

    def __init__(self, workspace: Workspace):
        self.workspace = workspace
        self.server = mcp_server(workspace, self._user_of)
        self.session_manager: StreamableHTTPSessionManager | None = None

    @asynccontextmanager
    async def running(self) -> AsyncIterator[None]:
        manager = StreamableHTTPSessionManager(app=self.server, stateless=True, json_response=True)
        async with manager.run():  # a manager runs once: a new one for each lifespan
            self.session_manager = manager
            try:
                yield
            finally:
                self.session_manager = None

    def _user_of(self, ctx) -> User | None:
        headers = getattr(ctx.request, "headers", None) or {}
        token = bearer_token(headers.get("authorization"))
        return None if token is None else self.workspace.guard.token_user(token)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        headers = {k.decode("latin-1"): v.decode("latin-1") for k, v in scope.get("headers", ())}
        token = bearer_token(headers.get("authorization"))
        user = None if token is None else await run_in_threadpool(self.workspace.guard.token_user, token)
        if user is None:
            response = JSONResponse({"error": "send Authorization: Bearer TOKEN (an API token of a workspace user)"},
                                    status_code=401, headers={"WWW-Authenticate": 'Bearer realm="visibility"'})
            await response(scope, receive, send)
            return
        if self.session_manager is None:
            await JSONResponse({"error": "the MCP endpoint is starting or stopping"}, status_code=503)(
                scope, receive, send)
            return
        await self.session_manager.handle_request(scope, receive, send)
