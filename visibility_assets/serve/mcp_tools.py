"""The workspace's views as Model Context Protocol tools, for a brand team's AI agent (Claude,
Cursor, an internal bot): `overview`, `competitors`, `questions`, `answers`, `sources` and
`alerts` take the views' own parameters, read the same layer (Workspace.view_data) and answer
the same JSON as /api/NAME, under the same roles. Served on stdio by `visibility mcp` and as
streamable HTTP at /mcp by `visibility serve` (serve/mcp_http.py).

Who asks is the owner of an API token, checked again on every call (a revoked token or a
changed role counts at once): `user_of` says who it is for the transport at hand. Every call,
and every refusal, is in the audit trail with its arguments."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import anyio
from mcp import types
from mcp.server.lowlevel import Server

from visibility_assets.measure.metric_catalog import metric_catalog
from visibility_assets.serve.accounts import User
from visibility_assets.serve.views.answers import NAMED
from visibility_assets.serve.workspace import VIEWS, ViewCall, ViewError, Workspace, api_body

NAME = "visibility"
INSTRUCTIONS = (
    "Figures of how AI assistants speak of the brands in the brand catalog, measured every night per"
    " platform. Every share is a count of answers over a count of answers with its 95% interval (low, high)"
    " and the n it stands on: quote the interval with the value, and call a change real only when the"
    " figure's `significant` says so.")

FILTERS = {
    "brand": {"type": "string", "description": "a brand of the catalog (default: the first own brand)"},
    "category": {"type": "string", "description": "the brand's category (default: the brand's)"},
    "from": {"type": "string", "description": "first day, YYYY-MM-DD (default: 7 days ending at `to`)"},
    "to": {"type": "string", "description": "last day, YYYY-MM-DD (default: the latest day measured)"},
    "platform": {"type": "string", "description": "platforms, comma-separated (default: every platform)"},
    "as_of": {"type": "string", "description": "a snapshot id or a time such as 2026-11-30 08:00:00+08:"
                                               " the figures as they stood then"},
}
OFFSET = {"type": "integer", "minimum": 0, "description": "rows to skip (the views page their rows)"}
EXTRA = {
    "competitors": {"metric": {"type": "string", "description": "the share compared (default mention_rate)"},
                    "sort": {"type": "string", "description": "sort by this platform's column"},
                    "search": {"type": "string", "description": "brands whose name contains this"},
                    "offset": OFFSET},
    "answers": {"question": {"type": "string", "description": "one question's id"},
                "named": {"type": "string", "enum": list(NAMED),
                          "description": "all answers, those that name the brand (yes), those that do not (no),"
                                         " those that advise against it (against)"},
                "offset": OFFSET},
    "alerts": {"offset": OFFSET},
}


def _overview_description() -> str:
    figures = "; ".join(f"{m.name} ({m.label}): {m.description}" for m in metric_catalog())
    return ("The brand's headline figures over a period, per platform and pooled over the chosen platforms"
            " (platform 'all'). `figures` has a row per metric and platform: value, its 95% interval (low, high;"
            " Wilson for a share, normal for the mean rank), n, the previous period of equal length and whether"
            " the change is significant by the alerts' test (two-proportion z test, Benjamini-Hochberg q)."
            f" The metrics: {figures} Also the daily trend, who labelled the sentiment and how accurate"
            " those labels are measured to be, and the options the catalog does not track.")


DESCRIPTIONS = {  # the overview's is written from the metric catalog when the tools are listed
    "overview": None,
    "competitors": (
        "Every tracked brand of the category side by side on one share (`metric`), per platform and pooled,"
        " each with its 95% Wilson interval and n; the brand asked about is always shown. Paged by `offset`."),
    "questions": (
        "Per question and platform: the valid answers, how many name the brand, its best and mean list rank,"
        " and the other brands those answers name and recommend; `gaps` are questions whose answers name"
        " competitors and never the brand."),
    "answers": (
        "The answers behind the figures, with their text, the brand's matches (why each was accepted) and"
        " provenance (platform, model, date, request key). Needs the analyst role: a viewer may not read"
        " answer text. Paged by `offset`."),
    "sources": (
        "The domains each platform's answers to the category cite, the brand's own-domain citations, and the"
        " domains cited beside competitors but never beside the brand."),
    "alerts": (
        "The alerts of the period: changes found significant against the trailing days (rate and baseline each"
        " with its 95% interval, p and q values), then the borderline ones; and collection quality (faults)."),
}
TOOLS = tuple(DESCRIPTIONS)

UserOf = Callable[[Any], User | None]  # the request context of a call -> who is asking (None: nobody)


class ToolError(Exception):
    """A call that cannot be answered; its message goes back to the agent as an error result."""


def tool_list() -> list[types.Tool]:
    return [types.Tool(name=name, description=DESCRIPTIONS[name] or _overview_description(),
                       input_schema={"type": "object", "properties": {**FILTERS, **EXTRA.get(name, {})},
                                     "additionalProperties": False})
            for name in TOOLS]


def view_query(name: str, arguments: dict | None) -> dict[str, str]:
    """A tool's arguments as the view's URL query: the same strings a link would carry."""
    allowed = {**FILTERS, **EXTRA.get(name, {})}
    query = {}
    for key, value in (arguments or {}).items():
        if key not in allowed:
            raise ToolError(f"{name}: unknown argument {key!r} (known: {', '.join(allowed)})")
        if key == "platform" and isinstance(value, list):
            value = ",".join(str(v) for v in value)
        if isinstance(value, bool) or not isinstance(value, (str, int)):
            raise ToolError(f"{name}: {key} must be {allowed[key]['type']}, not {type(value).__name__}")
        query[key] = str(value)
    return query


def call_view(workspace: Workspace, user: User | None, name: str, arguments: dict | None) -> dict:
    """The tool's answer: the view's JSON as /api/NAME gives it (raises ToolError)."""
    if user is None:
        raise ToolError("no user: present a valid API token (`visibility users token NAME`)")
    if name not in TOOLS:
        raise ToolError(f"unknown tool {name!r} (known: {', '.join(TOOLS)})")
    role = VIEWS[name].role
    query = view_query(name, arguments)
    asked = json.dumps(query, ensure_ascii=False)[:500]
    if not user.may(role):
        workspace.accounts.audit(user.name, "mcp_refused", name, None, f"needs the {role} role: {asked}")
        raise ToolError(f"the {name} tool needs the {role} role; {user.name} is a {user.role}")
    workspace.accounts.audit(user.name, "mcp_call", name, None, asked)
    try:
        return api_body(name, workspace.view_data(name, ViewCall(query, user, workspace.reviews)))
    except ViewError as exc:
        raise ToolError(f"{name}: {exc}") from None


def mcp_server(workspace: Workspace, user_of: UserOf) -> Server:
    async def list_tools(ctx, params) -> types.ListToolsResult:
        user = await anyio.to_thread.run_sync(user_of, ctx)
        return types.ListToolsResult(tools=tool_list() if user is not None else [])

    async def call_tool(ctx, params: types.CallToolRequestParams) -> types.CallToolResult:
        try:
            user = await anyio.to_thread.run_sync(user_of, ctx)
            body = await anyio.to_thread.run_sync(call_view, workspace, user, params.name, params.arguments)
        except ToolError as exc:
            return types.CallToolResult(content=[types.TextContent(type="text", text=str(exc))], is_error=True)
        text = json.dumps(body, ensure_ascii=False)
        return types.CallToolResult(content=[types.TextContent(type="text", text=text)], structured_content=body)

    return Server(NAME, instructions=INSTRUCTIONS, on_list_tools=list_tools, on_call_tool=call_tool)
