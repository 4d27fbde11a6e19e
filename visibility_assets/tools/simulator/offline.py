"""The simulated platforms without HTTP: a planned request's answer straight from the simulator's
routes, read by the platform's own dialect and priced as the collector prices it.

For benchmarks that write many nights of history (`bench history`), where what is measured is
the warehouse and the orchestration a night leaves behind, not the collection: a request costs
the simulator's composing (~0.1 ms) instead of an HTTP exchange. A tool loop (Kimi's
$web_search) is answered round by round, as the platform would answer it.
"""

from __future__ import annotations

import json
import time
from datetime import UTC, datetime
from urllib.parse import urlsplit

from visibility_assets.collect.client import SUCCEEDED, Attempt, RequestOutcome, priced_answer
from visibility_assets.collect.dialects import dialect_of
from visibility_assets.collect.plan import PlannedRequest
from visibility_assets.config import Platform, VisibilityConfig
from visibility_assets.core.secrets import SecretScrubber
from visibility_assets.tools.simulator.app import SimulatorApp
from visibility_assets.tools.simulator.behaviour import SimulatorSettings
from visibility_assets.tools.simulator.routes import route


class OfflineRefusal(Exception):
    """The simulator answered a request with an error (its settings asked for faults)."""


class OfflinePlatforms:
    """The config's platforms as the simulator answers them, in this process."""

    def __init__(self, config: VisibilityConfig, settings: SimulatorSettings):
        self.config = config
        self.app = SimulatorApp(settings, config)
        self.scrub = SecretScrubber()

    def answer(self, platform: Platform, request: PlannedRequest, run_id: str) -> RequestOutcome:
        """The request answered on its first attempt, as the collector stores an answer."""
        dialect = dialect_of(platform)
        started, clock = datetime.now(UTC), time.perf_counter()
        payloads = self._rounds(platform, request)
        attempt = Attempt(request.request_key, 1, run_id, started, datetime.now(UTC),
                          (time.perf_counter() - clock) * 1000, http_status=200,
                          tool_rounds=len(payloads) - 1 if dialect.max_tool_rounds else None)
        normalized = dialect.read_rounds(payloads)
        payload_json = json.dumps(payloads[0] if len(payloads) == 1 else payloads, ensure_ascii=False)
        price = self.config.price(platform.name, platform.model, datetime.fromisoformat(request.date).date())
        answer = priced_answer(normalized, payload_json, attempt, price, self.scrub)
        return RequestOutcome(request, SUCCEEDED, answer=answer, attempts=[attempt])

    def _rounds(self, platform: Platform, request: PlannedRequest) -> list[dict]:
        dialect = dialect_of(platform)
        path = urlsplit(dialect.url(platform)).path
        headers = {"idempotency-key": request.request_key, "x-visibility-date": request.date,
                   "content-type": "application/json"}
        body, payloads = request.body, []
        while True:
            reply, _ = route(self.app, "POST", path, headers, json.dumps(body).encode())
            if reply.status != 200:
                raise OfflineRefusal(f"{platform.name}: HTTP {reply.status}: {reply.body[:200]!r}")
            payloads.append(json.loads(reply.body))
            following = dialect.next_round(body, payloads[-1])
            if following is None or len(payloads) > dialect.max_tool_rounds:
                return payloads
            body = following
