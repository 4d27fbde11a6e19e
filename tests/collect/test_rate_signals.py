"""The rate-limit signals of the platforms and of the gateways in front of them."""

import httpx
import pytest

from visibility_assets.collect.errors import parse_duration, parse_rate_limit
from visibility_assets.core.retry import parse_retry_after


@pytest.mark.parametrize(("text", "seconds"), [("1s", 1.0), ("6m0s", 360.0), ("20ms", 0.02), ("1h2m", 3720.0),
                                               ("2.5", 2.5), ("soon", None), ("1sx", None)])
def test_reset_durations_read_as_openai_writes_them(text, seconds):
    assert parse_duration(text) == seconds


def test_remaining_and_reset_from_each_platforms_headers():
    assert parse_rate_limit(httpx.Headers({"x-ratelimit-remaining-requests": "0",
                                           "x-ratelimit-reset-requests": "6m0s"})) == (0, 360.0)
    assert parse_rate_limit(httpx.Headers({"X-RateLimit-Remaining": "12", "X-RateLimit-Reset": "30"})) == (12, 30.0)
    assert parse_rate_limit(httpx.Headers({"X-RateLimit-Reset": "1000000060"}), now=1000000000) == (None, 60.0)
    assert parse_rate_limit(httpx.Headers({})) == (None, None)


def test_a_gateways_copy_of_retry_after_is_honoured():
    """LiteLLM's proxy sends llm_provider-retry-after and no Retry-After."""
    assert parse_retry_after(httpx.Headers({"llm_provider-retry-after": "60"})) == 60.0
    assert parse_retry_after(httpx.Headers({"retry-after": "5", "llm_provider-retry-after": "60"})) == 5.0
