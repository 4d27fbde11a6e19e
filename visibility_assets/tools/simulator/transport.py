"""The simulator in process: an httpx transport over its request handler (routes.py), so that a
collector in the same process reaches the simulated platforms with no socket and no server.

It sends what the socket server sends, faults included, as httpx would meet them: a hang or a
dropped connection is a read error after the fault's delay, a truncated body ends with a
protocol error, DeepSeek's keep-alive lines precede the body, a drip sends two bytes at a time.
Tests whose subject is not HTTP itself mount it for a base URL (collect/transport.py).
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import httpx

from visibility_assets.config import VisibilityConfig
from visibility_assets.tools.simulator.app import Reply, SimulatorApp
from visibility_assets.tools.simulator.behaviour import Fault, SimulatorSettings
from visibility_assets.tools.simulator.routes import answered, route

IN_PROCESS_URL = "http://simulator.test"  # a reserved name: no request for it can leave the machine


class SimulatorTransport(httpx.AsyncBaseTransport):
    def __init__(self, settings: SimulatorSettings, config: VisibilityConfig | None = None):
        self.app = SimulatorApp(settings, config)

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        body = await request.aread()
        trace = request.extensions.get("trace")
        if trace is not None:  # the request's body goes out, as httpcore reports it
            await trace("http11.send_request_body.started", {})
            await trace("http11.send_request_body.complete", {})
        headers = {name.lower(): value for name, value in request.headers.items()}
        reply, platform = route(self.app, request.method, request.url.path, headers, body)
        if reply.fault in (Fault.HANG, Fault.DROP):
            await asyncio.sleep(reply.delay_s)
            raise httpx.RemoteProtocolError("Server disconnected without sending a response.", request=request)
        lines = int(reply.delay_s // reply.keepalive_s) if reply.keepalive_s else 0
        if not lines:
            await asyncio.sleep(reply.delay_s)
        return httpx.Response(reply.status, headers=[("content-type", reply.content_type), *reply.headers],
                              stream=_Body(self.app, platform, reply, lines, request), request=request)


class _Body(httpx.AsyncByteStream):
    def __init__(self, app: SimulatorApp, platform: str | None, reply: Reply, keepalive_lines: int,
                 request: httpx.Request):
        self.app, self.platform, self.reply, self.lines, self.request = app, platform, reply, keepalive_lines, request

    async def __aiter__(self) -> AsyncIterator[bytes]:
        reply = self.reply
        for _ in range(self.lines):
            await asyncio.sleep(reply.keepalive_s)
            yield b"\n"
        if self.lines:
            await asyncio.sleep(reply.delay_s - self.lines * reply.keepalive_s)
        if reply.drip_s:
            for start in range(0, len(reply.body), 2):
                yield reply.body[start:start + 2]
                await asyncio.sleep(reply.drip_s)
        else:
            yield reply.body
        if reply.fault is Fault.TRUNCATED:
            raise httpx.RemoteProtocolError("peer closed connection without sending complete message body",
                                            request=self.request)
        answered(self.app, self.platform, reply)
