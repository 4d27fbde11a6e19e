"""A webhook receiver on loopback: records every request and answers from a script."""

from __future__ import annotations

import json
import threading
import time
from collections import deque
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qsl


@dataclass
class Received:
    path: str
    query: str  # as sent, still percent-encoded
    headers: dict[str, str]
    body: bytes

    @property
    def json(self) -> dict:
        return json.loads(self.body)

    @property
    def params(self) -> dict[str, str]:
        return dict(parse_qsl(self.query))


@dataclass
class Reply:
    status: int
    body: dict | str
    headers: dict[str, str] | None = None
    delay: float = 0.0


class Receiver:
    """Records every request; answers each path from its script, then with its default reply."""

    def __init__(self) -> None:
        self.requests: list[Received] = []
        self.scripts: dict[str, deque[Reply]] = {}
        self.defaults: dict[str, Reply] = {}
        self._lock = threading.Lock()
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self.server.daemon_threads = True
        self.server.handle_error = lambda request, address: None  # a client that timed out hung up
        self.base = f"http://127.0.0.1:{self.server.server_address[1]}"

    def on(self, path: str, default: Reply, *script: Reply) -> None:
        self.defaults[path] = default
        self.scripts[path] = deque(script)

    def to(self, path: str) -> list[Received]:
        return [r for r in self.requests if r.path == path]

    def _reply(self, path: str) -> Reply:
        with self._lock:
            script = self.scripts.get(path)
            return script.popleft() if script else self.defaults.get(path, Reply(404, "no_service"))

    def _handler(self):
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                path, _, query = self.path.partition("?")
                body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
                with receiver._lock:
                    receiver.requests.append(Received(path, query, dict(self.headers), body))
                reply = receiver._reply(path)
                time.sleep(reply.delay)
                data = reply.body if isinstance(reply.body, str) else json.dumps(reply.body)
                payload = data.encode()
                self.send_response(reply.status)
                self.send_header("Content-Type", "text/plain" if isinstance(reply.body, str) else "application/json")
                self.send_header("Content-Length", str(len(payload)))
                for name, value in (reply.headers or {}).items():
                    self.send_header(name, value)
                self.end_headers()
                self.wfile.write(payload)

            def log_message(self, *args) -> None:
                pass

        return Handler
