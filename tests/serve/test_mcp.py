"""The MCP server, driven by the official SDK's own client: over stdio (`visibility mcp` as a
subprocess) and over streamable HTTP (`visibility serve` with two workers, real loopback HTTP).
Its tools answer what /api/NAME answers, under the same roles, and nothing without a token."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys

import httpx
import httpx2
import pytest
from mcp import Client
from mcp.client.stdio import StdioServerParameters
from mcp.client.streamable_http import streamable_http_client

from tests.workspace_lake import DAY, FIRST_DAY
from visibility_assets.serve.mcp_tools import TOOLS
from visibility_assets.tools.bench.serve import SERVE, running_workspace

pytestmark = pytest.mark.slow
VISIBILITY = [sys.executable, "-m", "visibility_assets.cli"]


def _env(workspace, **extra) -> dict:
    return {**os.environ, "VISIBILITY_HOME": str(workspace.home), "VISIBILITY_CONFIG_DIR": str(workspace.config.directory),
            "VISIBILITY_SERVE_SECRET": "mcp-test-secret", **extra}


@pytest.fixture(scope="module")
def tokens(workspace):
    return {name: workspace.accounts.new_token(name) for name in ("vera", "ana")}


@pytest.fixture(scope="module")
def served(workspace):
    with running_workspace([*SERVE, "--workers", "2"], _env(workspace)) as base:
        yield base


def _stdio(workspace, token: str) -> Client:
    return Client(StdioServerParameters(command=sys.executable, args=["-m", "visibility_assets.cli", "mcp"],
                                        env=_env(workspace, VISIBILITY_TOKEN=token)))


def _http(base: str, token: str) -> Client:
    http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"}, timeout=60)
    return Client(streamable_http_client(base + "/mcp", http_client=http))


async def _session(client: Client, calls: list[tuple[str, dict]]) -> tuple[list[str], list]:
    async with client:
        names = [tool.name for tool in (await client.list_tools()).tools]
        return names, [await client.call_tool(name, arguments) for name, arguments in calls]


def _api(base_or_client, token: str, path: str) -> dict:
    response = base_or_client.get(path, headers={"Authorization": f"Bearer {token}"})
    assert response.status_code == 200, response.text[:300]
    return response.json()


ARGUMENTS = {"brand": "阿里云", "from": FIRST_DAY, "to": DAY, "platform": "deepseek,kimi"}
QUERY = f"brand=阿里云&from={FIRST_DAY}&to={DAY}&platform=deepseek,kimi"


def _checks(names: list[str], results: list, api: dict) -> None:
    assert names == list(TOOLS)
    overview, competitors, denied, unknown = results
    assert not overview.is_error, overview.content
    assert overview.structured_content == api["overview"]  # the same figures, snapshot and intervals
    figures = overview.structured_content["figures"]
    assert figures and all({"value", "low", "high"} <= set(row) for row in figures)
    assert not competitors.is_error and competitors.structured_content == api["competitors"]
    assert denied.is_error and "analyst role" in denied.content[0].text and "vera is a viewer" in denied.content[0].text
    assert unknown.is_error and "unknown brand" in unknown.content[0].text


CALLS_AS_VIEWER = [("overview", ARGUMENTS), ("competitors", {**ARGUMENTS, "metric": "recommend_rate"}),
                   ("answers", ARGUMENTS), ("overview", {"brand": "No Such Brand"})]


def test_over_stdio_the_tools_answer_what_the_api_answers_under_the_same_roles(workspace, tokens):
    client = workspace.client()
    api = {"overview": _api(client, tokens["vera"], f"/api/overview?{QUERY}"),
           "competitors": _api(client, tokens["vera"], f"/api/competitors?{QUERY}&metric=recommend_rate")}
    names, results = asyncio.run(_session(_stdio(workspace, tokens["vera"]), CALLS_AS_VIEWER))
    _checks(names, results, api)
    _, (answers,) = asyncio.run(_session(_stdio(workspace, tokens["ana"]), [("answers", ARGUMENTS)]))
    assert not answers.is_error
    assert answers.structured_content == _api(client, tokens["ana"], f"/api/answers?{QUERY}")
    trail = [(e.actor, e.action, e.subject) for e in workspace.accounts.audit_trail(50)]
    assert ("ana", "mcp_call", "answers") in trail and ("vera", "mcp_refused", "answers") in trail
    refusal = next(e for e in workspace.accounts.audit_trail(50) if e.action == "mcp_refused")
    assert refusal.detail.startswith("needs the analyst role: ") and '"brand"' in refusal.detail


def test_over_http_the_tools_answer_what_the_api_answers_under_the_same_roles(served, tokens):
    with httpx.Client(base_url=served) as web:
        api = {"overview": _api(web, tokens["vera"], f"/api/overview?{QUERY}"),
               "competitors": _api(web, tokens["vera"], f"/api/competitors?{QUERY}&metric=recommend_rate")}
    names, results = asyncio.run(_session(_http(served, tokens["vera"]), CALLS_AS_VIEWER))
    _checks(names, results, api)


def test_no_token_no_tools(workspace, served, tokens):
    for token in (None, "vis_not-a-token"):
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        answer = httpx.post(served + "/mcp", headers={**headers, "Accept": "application/json, text/event-stream"},
                            json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"})
        assert answer.status_code == 401 and "Bearer" in answer.headers["www-authenticate"]
    without = subprocess.run([*VISIBILITY, "mcp"], env={k: v for k, v in _env(workspace).items()
                                                        if k != "VISIBILITY_TOKEN"},
                             capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL)
    assert without.returncode == 2 and "VISIBILITY_TOKEN is not set" in without.stderr
    assert "Traceback" not in without.stderr and without.stdout == ""
    wrong = subprocess.run([*VISIBILITY, "mcp"], env=_env(workspace, VISIBILITY_TOKEN="vis_wrong"),
                           capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL)
    assert wrong.returncode == 2 and "no user holds this API token" in wrong.stderr
