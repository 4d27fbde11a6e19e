"""`visibility serve`: the brand team's web workspace over the warehouse (read-only)."""

from __future__ import annotations

import os
import socket

from visibility_assets.cli.arguments import UserError, config_of, positive_int
from visibility_assets.cli.lake_reader import read_warehouse
from visibility_assets.core.paths import data_dir
from visibility_assets.serve.accounts import Accounts
from visibility_assets.serve.settings import ServeSettingError, ServeSettings

APP_FACTORY = "visibility_assets.serve.app:app_from_env"


def add_parser(commands) -> None:
    serve = commands.add_parser("serve", help="the brand team's web workspace over the warehouse")
    serve.add_argument("--host", default="127.0.0.1", help="the address to listen on (default 127.0.0.1)")
    serve.add_argument("--port", type=int, default=8080, help="the port (default 8080)")
    serve.add_argument("--workers", type=positive_int, default=min(4, os.cpu_count() or 1),
                       help="server processes (default: the cores, at most 4)")
    serve.add_argument("--root-path", default="", help="the path prefix behind a reverse proxy, e.g. /visibility")
    serve.set_defaults(handler=run)


def run(args) -> int:
    config = config_of(args)  # a bad config is an error now, not in each worker
    if args.config_dir:
        os.environ["VISIBILITY_CONFIG_DIR"] = str(config.directory)
    if not 0 < args.port < 65536:
        raise UserError(f"--port {args.port}: not a port")
    if args.root_path and not args.root_path.startswith("/"):
        raise UserError("--root-path starts with / (e.g. /visibility)")
    refuse_a_busy_port(args.host, args.port)
    try:
        ServeSettings.from_env()
    except ServeSettingError as exc:
        raise UserError(str(exc)) from None
    with read_warehouse():
        pass  # no warehouse yet is a clear error here
    os.environ["VISIBILITY_SERVE_ROOT_PATH"] = args.root_path.rstrip("/")
    os.environ["VISIBILITY_HOME"] = str(data_dir())  # the workers find the same data directory
    if not Accounts.under(data_dir()).users():
        print("no users yet: add one with `visibility users add NAME --role admin` (nobody can log in until then)")
    print(f"workspace: http://{args.host}:{args.port}{args.root_path} ({args.workers} worker"
          f"{'s' if args.workers != 1 else ''}; Ctrl-C stops it)", flush=True)
    import uvicorn
    uvicorn.run(APP_FACTORY, factory=True, host=args.host, port=args.port, workers=args.workers,
                proxy_headers=False, server_header=False, log_level="warning", access_log=False)
    return 0


def open_workspace(config):
    """The workspace's read layer for a command that reads its views (`visibility mcp`, `visibility
    digest`), or a user error: no warehouse yet, or a bad serve setting."""
    from visibility_assets.serve.app import build_workspace

    with read_warehouse():
        pass  # no warehouse yet is a clear error here, not in the first view read
    try:
        return build_workspace(ServeSettings.from_env(), config)
    except ServeSettingError as exc:
        raise UserError(str(exc)) from None


def refuse_a_busy_port(host: str, port: int) -> None:
    """UserError when the address cannot be listened on, before anything says the workspace
    started (uvicorn would print its own error, then exit 3, after our "workspace:" line)."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    with socket.socket(family, socket.SOCK_STREAM) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as uvicorn binds it
        try:
            probe.bind((host, port))
        except OSError as exc:
            raise UserError(f"cannot listen on {host}:{port}: {exc.strerror or exc}"
                            " (another server holds it? choose another with --port)") from None
