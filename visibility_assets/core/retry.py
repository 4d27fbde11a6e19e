"""The one backoff formula and the one Retry-After reader, for every retry loop of the
pipeline: requests to the platforms (collect/client.py), webhook deliveries (notify/webhooks.py)
and lake commits that met another writer's (warehouse/lake.py)."""

from __future__ import annotations

import email.utils
import random
import time

import httpx


def backoff_s(attempt: int, base_s: float, cap_s: float, rng: random.Random | None = None,
              fixed_share: float = 0.0) -> float:
    """Seconds to wait before retry `attempt` (1 for the first retry): base_s doubled at each
    attempt up to cap_s, of which `fixed_share` is waited for sure and the rest drawn at random.

    0 is "full jitter" (uniform in [0, delay]): retries that collided spread out the most. 0.5
    is "equal jitter": never less than half the delay, for a service that asked to be left alone.
    """
    delay = min(cap_s, base_s * 2 ** (attempt - 1))
    return delay * fixed_share + (rng or random).uniform(0, delay * (1 - fixed_share))


# Gateways in front of the platforms pass the platform's hint on under their own name:
# LiteLLM's proxy sends `llm_provider-retry-after` (seconds) and no Retry-After.
RETRY_AFTER_HEADERS = ("retry-after", "llm_provider-retry-after")


def parse_retry_after(headers: httpx.Headers, now: float | None = None) -> float | None:
    """Seconds to wait, from `retry-after-ms`, or `Retry-After` (or a gateway's copy of it) as
    seconds or an HTTP date."""
    now = time.time() if now is None else now
    millis = headers.get("retry-after-ms")
    if millis:
        try:
            return max(0.0, float(millis) / 1000)
        except ValueError:
            pass
    value = next((headers[name] for name in RETRY_AFTER_HEADERS if headers.get(name)), None)
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    parsed = email.utils.parsedate_to_datetime(value) if _looks_like_date(value) else None
    if parsed is None:
        return None
    return max(0.0, parsed.timestamp() - now)


def _looks_like_date(value: str) -> bool:
    try:
        return email.utils.parsedate_tz(value) is not None
    except (TypeError, ValueError):
        return False
