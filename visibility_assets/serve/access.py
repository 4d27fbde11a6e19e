"""Every route but the login page, the health check and the static files needs a user, and
declares the least role it needs; `protected` wraps a handler so that it cannot forget.

Without a user: a page redirects to the login page, the API answers 401. With too small a
role: 403, as a page or as JSON. A form that changes something (any method but GET) carries
the session's CSRF token or gets 403. Handlers are plain functions run in the server's thread pool
(the warehouse reads block)."""

from __future__ import annotations

from collections.abc import Callable
from urllib.parse import quote

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import JSONResponse, RedirectResponse, Response

from visibility_assets.serve.accounts import ROLES

PUBLIC_PATHS = ("/login", "/healthz", "/static", "/s/")  # all that answers without a login (/s/: share links)
SAFE_METHODS = ("GET", "HEAD")  # any other method changes something: it needs the session's CSRF token


def protected(role: str, api: bool = False) -> Callable:
    assert role in ROLES

    def wrap(handler: Callable[[Request], Response]) -> Callable:
        async def endpoint(request: Request) -> Response:
            workspace = request.app.state.workspace
            user = await run_in_threadpool(workspace.guard.user, request)
            if user is None:
                if api:
                    return JSONResponse({"error": "log in, or send Authorization: Bearer TOKEN"}, status_code=401,
                                        headers={"WWW-Authenticate": 'Bearer realm="visibility"'})
                target = request.url.path + (("?" + request.url.query) if request.url.query else "")
                return RedirectResponse(workspace.url("/login") + "?next=" + quote(target, safe=""), status_code=303)
            request.state.user = user
            if request.method not in SAFE_METHODS:
                form = request.state.form = await request.form()  # the handler reads it there
                # A script's bearer token is no cookie a browser sends by itself: no CSRF to fear.
                if request.state.auth != "token" and not workspace.guard.csrf_ok(request, str(form.get("csrf", ""))):
                    if api:
                        return JSONResponse({"error": "missing or wrong CSRF token"}, status_code=403)
                    return workspace.page(request, "forbidden.html", {
                        "message": "the form's CSRF token is missing or wrong: reload the page and try again"},
                        status_code=403)
            if not user.may(role):
                message = f"this needs the {role} role; {user.name} is a {user.role}"
                if api:
                    return JSONResponse({"error": message}, status_code=403)
                return workspace.page(request, "forbidden.html", {"message": message}, status_code=403)
            response = await run_in_threadpool(handler, request)
            workspace.guard.set_new_session(request, response)
            return response

        endpoint.required_role = role
        endpoint.__name__ = handler.__name__
        return endpoint
    return wrap
