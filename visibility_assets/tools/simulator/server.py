"""The simulated AI platforms: each platform's Chat Completions API on loopback, in its dialect.

`POST /<platform>/v1/chat/completions` answers like a real assistant would, shaped the way
that platform shapes its answers, sources, usage and errors (dialects/); Doubao's web search
goes to its bot endpoint, `POST /<platform>/v1/bots/chat/completions`. Each platform can be
told to misbehave (see behaviour.py). The server speaks HTTP/1.1 through h11 on plain
asyncio streams, because faults such as dropped connections, truncated bodies and DeepSeek's
keep-alive lines need control below what a web framework exposes.

`GET /_stats` returns what was received, per platform and per request key, so tests can
prove that nothing was asked twice; `GET /health` says the simulator is up;
`POST /_admin/<platform>/topup` pays a platform's arrears (see `billing_error`).
"""

from __future__ import annotations

import asyncio
import threading

import h11

from visibility_assets.config import VisibilityConfig
from visibility_assets.tools.simulator.app import SimulatorApp
from visibility_assets.tools.simulator.behaviour import Fault, SimulatorSettings
from visibility_assets.tools.simulator.routes import answered, route


class SimulatorServer:
    """Runs SimulatorApp on 127.0.0.1, in the foreground or in a background thread."""

    def __init__(self, settings: SimulatorSettings, config: VisibilityConfig | None = None,
                 host: str = "127.0.0.1", port: int = 0):
        self.app = SimulatorApp(settings, config)
        self.host, self.port = host, port
        self._loop: asyncio.AbstractEventLoop | None = None
        self._server: asyncio.AbstractServer | None = None
        self._thread: threading.Thread | None = None
        self._tasks: set[asyncio.Task] = set()

    @property
    def url(self) -> str:
        return f"http://{self.host}:{self.port}"

    async def serve(self, ready: threading.Event | None = None) -> None:
        self._loop = asyncio.get_running_loop()
        self._server = await asyncio.start_server(self._on_connection, self.host, self.port, backlog=1024)
        self.port = self._server.sockets[0].getsockname()[1]
        if ready:
            ready.set()
        async with self._server:
            await self._server.serve_forever()

    def start_in_thread(self) -> SimulatorServer:
        ready = threading.Event()
        failure: list[BaseException] = []

        def run():
            try:
                asyncio.run(self.serve(ready))
            except asyncio.CancelledError:
                pass
            except BaseException as exc:  # surfaced to the caller below
                failure.append(exc)
                ready.set()

        self._thread = threading.Thread(target=run, name="visibility-simulator", daemon=True)
        self._thread.start()
        ready.wait(10)
        if failure:
            raise failure[0]
        return self

    def stop(self) -> None:
        if self._loop and self._server:
            def shutdown():
                self._server.close()
                for task in list(self._tasks):
                    task.cancel()
                for task in asyncio.all_tasks(self._loop):
                    task.cancel()
            self._loop.call_soon_threadsafe(shutdown)
        if self._thread:
            self._thread.join(10)

    def __enter__(self) -> SimulatorServer:
        return self.start_in_thread()

    def __exit__(self, *exc) -> None:
        self.stop()

    async def _on_connection(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        self._tasks.add(task)
        conn = h11.Connection(h11.SERVER)
        try:
            while True:
                request, body = await _read_request(conn, reader)
                if request is None:
                    return
                keep_open = await self._respond(conn, writer, request, body)
                if not keep_open or conn.our_state is h11.MUST_CLOSE:
                    return
                conn.start_next_cycle()
        except (ConnectionError, h11.ProtocolError, asyncio.IncompleteReadError, asyncio.CancelledError):
            return  # the client went away, or the server is shutting down
        finally:
            self._tasks.discard(task)
            writer.close()

    async def _respond(self, conn: h11.Connection, writer: asyncio.StreamWriter,
                       request: h11.Request, body: bytes) -> bool:
        path = request.target.decode("latin-1").split("?", 1)[0]
        headers = {k.decode().lower(): v.decode("latin-1") for k, v in request.headers}
        reply, platform = route(self.app, request.method.decode(), path, headers, body)
        if reply.fault in (Fault.HANG, Fault.DROP):
            await asyncio.sleep(reply.delay_s)
            writer.transport.abort()
            return False
        lines = int(reply.delay_s // reply.keepalive_s) if reply.keepalive_s else 0
        full_length = lines + len(reply.body)
        declared = full_length * (2 if reply.fault is Fault.TRUNCATED else 1)
        headers_out = [("content-type", reply.content_type), ("content-length", str(declared)), *reply.headers]
        if lines:
            # DeepSeek answers at once and sends a blank line now and then while the request waits.
            writer.write(conn.send(h11.Response(status_code=reply.status, headers=headers_out)))
            await writer.drain()
            for _ in range(lines):
                await asyncio.sleep(reply.keepalive_s)
                writer.write(conn.send(h11.Data(data=b"\n")))
                await writer.drain()
            await asyncio.sleep(reply.delay_s - lines * reply.keepalive_s)
        else:
            await asyncio.sleep(reply.delay_s)
            writer.write(conn.send(h11.Response(status_code=reply.status, headers=headers_out)))
        if reply.drip_s:
            await writer.drain()
            for start in range(0, len(reply.body), 2):
                writer.write(conn.send(h11.Data(data=reply.body[start:start + 2])))
                await writer.drain()
                await asyncio.sleep(reply.drip_s)
        else:
            writer.write(conn.send(h11.Data(data=reply.body)))
        if reply.fault is Fault.TRUNCATED:
            await writer.drain()
            writer.transport.abort()
            return False
        writer.write(conn.send(h11.EndOfMessage()))
        await writer.drain()
        answered(self.app, platform, reply)
        return True



async def _read_request(conn: h11.Connection, reader: asyncio.StreamReader):
    request, chunks = None, []
    while True:
        event = conn.next_event()
        if event is h11.NEED_DATA:
            conn.receive_data(await reader.read(65536))
        elif isinstance(event, h11.Request):
            request = event
        elif isinstance(event, h11.Data):
            chunks.append(event.data)
        elif isinstance(event, h11.EndOfMessage):
            return request, b"".join(chunks)
        elif isinstance(event, h11.ConnectionClosed):
            return None, b""
