"""The simulator's routes: which reply a request gets, whoever carries it (the socket server,
server.py, or the in-process transport, transport.py)."""

from __future__ import annotations

from visibility_assets.tools.simulator.app import (
    ADMIN_PREFIX,
    PATH_HEADER,
    TOPUP_SUFFIX,
    Reply,
    SimulatorApp,
    error_reply,
    handle_chat,
    json_reply,
)
from visibility_assets.tools.simulator.dialects import BOT_PATH_SUFFIX, CHAT_PATH_SUFFIX


def route(app: SimulatorApp, method: str, path: str, headers: dict[str, str], body: bytes) -> tuple[Reply, str | None]:
    """The reply to one HTTP request, and the platform it was for (None for the other routes):
    what the socket server (server.py) and the in-process transport (transport.py) both send."""
    platform = None
    if method == "GET" and path == "/health":
        reply = json_reply(200, {"simulator": True, "seed": app.settings.seed})
    elif method == "GET" and path == "/_stats":
        reply = json_reply(200, app.stats_json())
    elif method == "POST" and path.startswith(ADMIN_PREFIX) and path.endswith(TOPUP_SUFFIX):
        name = path[len(ADMIN_PREFIX):-len(TOPUP_SUFFIX)]
        if not _serves(app, name):
            reply = error_reply(404, f"unknown platform {name!r}", "not_found")
        else:
            app.top_up(name)
            reply = json_reply(200, {"platform": name, "billing_error": False})
    elif method == "POST" and path.endswith((BOT_PATH_SUFFIX, CHAT_PATH_SUFFIX)):
        bot = path.endswith(BOT_PATH_SUFFIX)
        name = path[: -len(BOT_PATH_SUFFIX if bot else CHAT_PATH_SUFFIX)].strip("/")
        if not _serves(app, name):
            reply = error_reply(404, f"unknown platform {name!r}", "not_found")
        elif bot and app.dialect(name).name != "doubao":
            reply = error_reply(404, f"no route for POST {path}: only Doubao has bots", "not_found")
        else:
            platform = name
            reply = handle_chat(app, platform, {**headers, PATH_HEADER: path}, body)
            app.stats[platform].status[reply.status or reply.fault.value] += 1
            app.stats[platform].faults[reply.fault.value] += 1
    else:
        reply = error_reply(404, f"no route for {method} {path}", "not_found")
    return reply, platform


def answered(app: SimulatorApp, platform: str | None, reply: Reply) -> None:
    """Count the answer once its whole body has gone out."""
    if reply.answered_key and platform is not None:
        app.stats[platform].answered_by_key[reply.answered_key] += 1


def _serves(app: SimulatorApp, name: str) -> bool:
    known = app.settings.known_platforms
    return bool(name) and "/" not in name and (known is None or name in known)
