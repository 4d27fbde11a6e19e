"""The simulated platforms over real HTTP: answers, determinism, each fault and the stats; and
the same platforms in process (transport.py), as a collector in the test's process meets them.

Each dialect's own shapes are tested in test_simulator_dialects.py."""

import asyncio
import email.utils

import httpx
import pytest

from visibility_assets.config import EXAMPLE_CONFIG_DIR, load_config
from visibility_assets.tools.simulator.behaviour import PlatformBehaviour, SimulatorSettings
from visibility_assets.tools.simulator.server import SimulatorServer
from visibility_assets.tools.simulator.transport import IN_PROCESS_URL, SimulatorTransport

pytestmark = pytest.mark.loopback

QUESTION = load_config(EXAMPLE_CONFIG_DIR).questions[0].text
BODY = {"model": "deepseek-chat", "messages": [{"role": "user", "content": QUESTION}]}


def _serve(**behaviour) -> SimulatorServer:
    settings = SimulatorSettings(seed=3, default=PlatformBehaviour(latency_s=(0, 0.001), **behaviour))
    return SimulatorServer(settings, load_config(EXAMPLE_CONFIG_DIR))


def _ask(server, platform="deepseek", key="k1", **kwargs):
    headers = {"Idempotency-Key": key, **kwargs.pop("headers", {})}
    return httpx.post(f"{server.url}/{platform}/v1/chat/completions", json=BODY, headers=headers,
                      timeout=kwargs.pop("timeout", 5), **kwargs)


def test_answers_like_openai_chat_completions_and_deterministically():
    with _serve() as server:
        first, again, other = _ask(server), _ask(server), _ask(server, key="k2")
    payload = first.json()
    assert first.status_code == 200 and payload["object"] == "chat.completion"
    assert payload["usage"]["total_tokens"] == payload["usage"]["prompt_tokens"] + payload["usage"]["completion_tokens"]
    assert payload["choices"][0]["message"]["content"] == again.json()["choices"][0]["message"]["content"]
    assert payload["choices"][0]["message"]["content"] != other.json()["choices"][0]["message"]["content"]


def test_counts_what_it_received_per_request_key():
    with _serve() as server:
        _ask(server), _ask(server), _ask(server, key="k2")
        stats = httpx.get(f"{server.url}/_stats").json()["deepseek"]
    assert stats["received_by_key"] == {"k1": 2, "k2": 1}
    assert stats["duplicates"] == 1


def test_rate_limit_answers_429_with_retry_after_in_seconds_or_date():
    with _serve(rate_limit_rps=1) as server:
        assert _ask(server).status_code == 200
        limited = _ask(server)
    assert limited.status_code == 429 and int(limited.headers["retry-after"]) >= 1
    with _serve(rate_limit_rps=1, retry_after_format="date") as server:
        _ask(server)
        limited = _ask(server)
    assert limited.status_code == 429 and email.utils.parsedate_to_datetime(limited.headers["retry-after"])


def test_required_key_gives_401_without_it():
    with _serve(api_key="sekret") as server:
        assert _ask(server).status_code == 401
        assert _ask(server, headers={"Authorization": "Bearer sekret"}).status_code == 200


def test_unknown_platform_is_404():
    settings = SimulatorSettings(known_platforms=frozenset({"deepseek"}))
    with SimulatorServer(settings) as server:
        assert _ask(server, platform="nope").status_code == 404


@pytest.mark.parametrize("fault", ["server_error_rate", "malformed_rate", "truncated_rate", "drop_rate", "hang_rate"])
def test_each_fault_shows_as_the_client_would_see_it(fault):
    with _serve(**{fault: 1.0}, hang_s=2) as server:
        try:
            response = _ask(server, timeout=0.5)
        except httpx.TimeoutException:
            outcome = "timeout"
        except (httpx.RemoteProtocolError, httpx.ReadError):
            outcome = "broken"
        else:
            if response.status_code >= 500:
                outcome = "5xx"
            else:
                try:
                    response.json()
                    outcome = "ok"
                except ValueError:
                    outcome = "malformed"
    expected = {"server_error_rate": "5xx", "malformed_rate": "malformed", "truncated_rate": "broken",
                "drop_rate": "broken", "hang_rate": "timeout"}
    assert outcome == expected[fault]


@pytest.mark.parametrize("fault", ["server_error_rate", "malformed_rate", "truncated_rate", "drop_rate", "hang_rate"])
def test_in_process_each_fault_shows_as_it_does_over_the_socket(fault):
    async def ask():
        transport = SimulatorTransport(SimulatorSettings(seed=3, default=PlatformBehaviour(
            latency_s=(0, 0.001), hang_s=2, **{fault: 1.0})), load_config(EXAMPLE_CONFIG_DIR))
        async with httpx.AsyncClient(transport=transport, timeout=5) as client:
            try:
                async with asyncio.timeout(0.5):  # the collector bounds a whole attempt so
                    response = await client.post(f"{IN_PROCESS_URL}/deepseek/v1/chat/completions", json=BODY,
                                                 headers={"Idempotency-Key": "k1"})
            except TimeoutError:
                return "timeout"
            except (httpx.RemoteProtocolError, httpx.ReadError):
                return "broken"
        if response.status_code >= 500:
            return "5xx"
        try:
            response.json()
            return "ok"
        except ValueError:
            return "malformed"

    expected = {"server_error_rate": "5xx", "malformed_rate": "malformed", "truncated_rate": "broken",
                "drop_rate": "broken", "hang_rate": "timeout"}
    assert asyncio.run(ask()) == expected[fault]


def test_in_process_answers_are_the_sockets_for_the_same_seed_and_key():
    settings = SimulatorSettings(seed=3, default=PlatformBehaviour(latency_s=(0, 0.001)))
    with _serve() as server:
        over_socket = _ask(server).json()

    async def ask():
        transport = SimulatorTransport(settings, load_config(EXAMPLE_CONFIG_DIR))
        async with httpx.AsyncClient(transport=transport) as client:
            response = await client.post(f"{IN_PROCESS_URL}/deepseek/v1/chat/completions", json=BODY,
                                         headers={"Idempotency-Key": "k1"})
        return response, transport.app.stats_json()["deepseek"]

    response, stats = asyncio.run(ask())
    assert response.json()["choices"] == over_socket["choices"]
    assert (stats["received"], stats["answered"]) == (1, 1)


def test_stats_count_what_the_dialects_add_and_admin_knows_only_served_platforms():
    settings = SimulatorSettings(known_platforms=frozenset({"deepseek"}),
                                 default=PlatformBehaviour(latency_s=(0, 0.001)))
    with SimulatorServer(settings) as server:
        _ask(server)
        stats = httpx.get(f"{server.url}/_stats").json()["deepseek"]
        assert httpx.post(f"{server.url}/_admin/nope/topup").status_code == 404
        assert httpx.post(f"{server.url}/_admin/deepseek/topup").status_code == 200
    assert {"tool_rounds", "tool_echo_rejected", "searched", "moderated", "truncated", "billing_errors",
            "window_limited"} <= set(stats)
    assert stats["received"] == stats["answered"] == 1


def test_a_fault_on_kimis_tool_call_round_spoils_it_like_any_answer():
    body = {"model": "kimi-k2", "messages": [{"role": "user", "content": QUESTION}],
            "tools": [{"type": "builtin_function", "function": {"name": "$web_search"}}]}
    with _serve(malformed_rate=1.0) as server:
        response = httpx.post(f"{server.url}/kimi/v1/chat/completions", json=body, timeout=5)
    with pytest.raises(ValueError):
        response.json()


def test_behaviour_refuses_an_unknown_window_header():
    with pytest.raises(ValueError, match="window_retry_header"):
        PlatformBehaviour(window_limit=5, window_retry_header="x-wait")
