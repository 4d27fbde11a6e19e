"""`visibility mcp`: the workspace's views as Model Context Protocol tools on stdio, for the
user whose API token is in VISIBILITY_TOKEN (an agent's config sets it). `visibility serve`
serves the same tools as streamable HTTP at /mcp."""

from __future__ import annotations

import os

from visibility_assets.cli.arguments import UserError, config_of

TOKEN_ENV = "VISIBILITY_TOKEN"


def add_parser(commands) -> None:
    mcp = commands.add_parser("mcp", help=f"the workspace's views as MCP tools on stdio (${TOKEN_ENV}: an API token)")
    mcp.set_defaults(handler=run)


def run(args) -> int:
    # The MCP SDK costs half a second to import: only this command pays it, not every command's
    # start (the demo's worker server imports the command line too).
    import anyio
    from mcp.server.stdio import stdio_server

    from visibility_assets.cli.serve import open_workspace
    from visibility_assets.serve.mcp_tools import mcp_server

    config = config_of(args)
    token = os.environ.get(TOKEN_ENV, "").strip()
    if not token:
        raise UserError(f"{TOKEN_ENV} is not set: give it an API token (`visibility users token NAME`)")
    workspace = open_workspace(config)
    if workspace.guard.token_user(token) is None:
        raise UserError(f"{TOKEN_ENV}: no user holds this API token (revoked, or of another data directory?)")
    server = mcp_server(workspace, lambda ctx: workspace.guard.token_user(token))  # checked again on each call

    async def serve() -> None:
        async with stdio_server() as (read_stream, write_stream):
            await server.run(read_stream, write_stream, server.create_initialization_options())
    try:
        anyio.run(serve)
    finally:
        workspace.settle()  # a copy of the marts a tool started ends before the process does
    return 0
