"""Every simulated platform speaks its own dialect: each is asked with the collector's own
adapter over loopback and its response read back with the same adapter."""

from __future__ import annotations

import json
import re
import time
from dataclasses import dataclass

import httpx
import pytest

from visibility_assets.collect.dialects import DIALECTS
from visibility_assets.collect.errors import ErrorClass
from visibility_assets.config import EXAMPLE_CONFIG_DIR, Platform, VisibilityConfig, load_config
from visibility_assets.core.answers import MODERATED, TRUNCATED, NormalizedAnswer
from visibility_assets.tools.simulator.app import PATH_HEADER, FixedWindow, SimulatorApp, handle_chat
from visibility_assets.tools.simulator.behaviour import PlatformBehaviour, SimulatorSettings
from visibility_assets.tools.simulator.server import SimulatorServer

pytestmark = pytest.mark.loopback  # a simulator on loopback, shared by the module

EXAMPLE = load_config(EXAMPLE_CONFIG_DIR)
QUESTION = EXAMPLE.questions[0].text
FAST = PlatformBehaviour(latency_s=(0, 0.001))
NAMES = tuple(DIALECTS)
SEARCHING = tuple(n for n in NAMES if DIALECTS[n].supports_search)  # all but deepseek
STRUCTURED = ("openai", "ernie", "hunyuan", "doubao", "perplexity")  # sources in a field of their own
THINKING = ("openai", "deepseek", "qwen", "ernie", "doubao", "kimi")  # a thinking switch in the request
# One window for the whole module (it runs in well under ten minutes): no test waits for a turn.
WINDOW_LIMIT, WINDOW_S = 3, 600.0
WINDOWED = {"openai-window": None, "ernie-window": "retry-after", "kimi-window": "llm_provider-retry-after"}
MODELS = {"openai": "gpt-4o-search-preview", "doubao": "bot-visibility-search", "perplexity": "sonar-pro"}

BEHAVIOURS = {
    **{f"{n}-mod": PlatformBehaviour(latency_s=FAST.latency_s, moderation_rate=1.0) for n in NAMES},
    **{f"{n}-cut": PlatformBehaviour(latency_s=FAST.latency_s, truncation_rate=1.0) for n in NAMES},
    **{f"{n}-owed": PlatformBehaviour(latency_s=FAST.latency_s, billing_error=True) for n in NAMES},
    **{name: PlatformBehaviour(latency_s=FAST.latency_s, window_limit=WINDOW_LIMIT, window_s=WINDOW_S,
                               window_retry_header=header) for name, header in WINDOWED.items()},
    **{f"{n}-bucket": PlatformBehaviour(latency_s=FAST.latency_s, rate_limit_rps=1) for n in ("openai", "ernie", "kimi")},
    "deepseek-slow": PlatformBehaviour(latency_s=(2.0, 2.0), keepalive_s=0.5),
}


def _dialect_of(name: str) -> str:
    return name.split("-")[0]


def _platform(name: str, base_url: str = "http://127.0.0.1:1/x/v1", **settings) -> Platform:
    dialect = _dialect_of(name)
    return Platform(name=name, base_url=base_url, model=MODELS.get(dialect, f"{dialect}-model"), dialect=dialect,
                    **settings)


# The simulator learns each platform's dialect from the config, as it does in a real run.
CONFIG = VisibilityConfig(EXAMPLE.directory, EXAMPLE.catalog, EXAMPLE.questions,
                          tuple(_platform(name) for name in (*NAMES, *BEHAVIOURS)))


@pytest.fixture(scope="module")
def server():
    settings = SimulatorSettings(seed=7, default=FAST, platforms=dict(BEHAVIOURS))
    with SimulatorServer(settings, CONFIG) as running:
        yield running


@pytest.fixture(scope="module")
def http():
    with httpx.Client(timeout=5) as client:
        yield client


@dataclass
class Exchange:
    responses: list[httpx.Response]
    payloads: list[dict]
    answer: NormalizedAnswer | None = None
    error: tuple[ErrorClass, str | None] | None = None

    @property
    def last(self) -> httpx.Response:
        return self.responses[-1]


def _ask(server, http, name: str, key: str, question: str = QUESTION, **settings) -> Exchange:
    """One request as the collector's client sends it, tool loop included."""
    platform = _platform(name, f"{server.url}/{name}/v1", **settings)
    dialect = DIALECTS[platform.dialect]
    body = dialect.body(platform, question)
    exchange = Exchange([], [])
    while True:
        response = http.post(dialect.url(platform), json=body, headers={"Idempotency-Key": key})
        exchange.responses.append(response)
        if response.status_code != 200:
            exchange.error = dialect.classify_error(response.status_code, response.text)
            return exchange
        exchange.payloads.append(json.loads(response.text))
        following = dialect.next_round(body, exchange.payloads[-1])
        if following is None:
            break
        body = following
    exchange.answer = dialect.read_rounds(exchange.payloads)
    return exchange


def _stats(server, name: str) -> dict:
    return httpx.get(f"{server.url}/_stats").json()[name]


def _usage_adds_up(payload: dict) -> None:
    usage = payload["usage"]
    assert usage["prompt_tokens"] + usage["completion_tokens"] == usage["total_tokens"]


def _raw_sources(dialect: str, payload: dict) -> list[str]:
    """The URLs in the dialect's structured source field, checking its documented keys."""
    if dialect == "openai":
        annotations = payload["choices"][0]["message"]["annotations"]
        content = payload["choices"][0]["message"]["content"]
        for a in annotations:
            assert a["type"] == "url_citation"
            assert set(a["url_citation"]) == {"url", "title", "start_index", "end_index"}
            cited = a["url_citation"]
            assert cited["url"] in content[cited["start_index"]:cited["end_index"]]
        return [a["url_citation"]["url"] for a in annotations]
    if dialect == "ernie":
        assert all(set(r) == {"index", "url", "title"} for r in payload["search_results"])
        return [r["url"] for r in payload["search_results"]]
    if dialect == "hunyuan":
        results = payload["search_info"]["search_results"]
        assert all(set(r) == {"index", "title", "url", "text", "icon"} for r in results)
        return [r["url"] for r in results]
    if dialect == "doubao":
        assert all({"url", "title", "site_name", "summary"} <= set(r) for r in payload["references"])
        bot = payload["bot_usage"]
        for figure in ("prompt_tokens", "completion_tokens", "total_tokens"):
            assert sum(m[figure] for m in bot["model_usage"]) == payload["usage"][figure]
        assert [a["search_count"] for a in bot["action_usage"]] == [1]
        return [r["url"] for r in payload["references"]]
    if dialect == "perplexity":
        assert payload["citations"] == [r["url"] for r in payload["search_results"]]
        assert all({"title", "url", "date"} <= set(r) for r in payload["search_results"])
        assert payload["usage"]["num_search_queries"] >= 1
        return payload["citations"]
    raise AssertionError(dialect)


@pytest.mark.parametrize("name", NAMES)
def test_a_plain_answer_in_every_dialect(server, http, name):
    exchange = _ask(server, http, name, "plain")
    answer = exchange.answer
    assert answer is not None and answer.outcome == "answered" and answer.text
    assert not answer.search_used and not answer.citations and answer.tool_rounds == 0
    assert answer.reasoning_text is None
    _usage_adds_up(exchange.payloads[0])
    assert exchange.payloads[0]["object"] == "chat.completion"


@pytest.mark.parametrize("name", SEARCHING)
def test_search_sources_come_back_where_the_dialect_puts_them(server, http, name):
    exchange = _ask(server, http, name, "search", web_search=True)
    answer, payload = exchange.answer, exchange.payloads[-1]
    assert answer is not None and answer.outcome == "answered"
    _usage_adds_up(payload)
    if name in STRUCTURED:
        urls = _raw_sources(name, payload)
        assert 2 <= len(set(urls)) <= 4
        assert answer.search_used
        assert [c.url for c in answer.citations] == urls
    elif name == "kimi":  # the search runs in the tool loop; sources only ever as text
        assert answer.search_used and answer.tool_rounds == 1 and answer.usage.search_count == 1
    else:  # qwen's compatible mode searches but documents no sources in the response
        assert name == "qwen" and not answer.citations and not answer.search_used
        assert _stats(server, name)["searched"] >= 1
    again = _ask(server, http, name, "search", web_search=True)
    assert again.payloads[-1]["choices"] == payload["choices"]  # a retry gets the same answer and sources


def test_doubao_searches_only_through_its_bot_endpoint(server, http):
    platform = _platform("doubao", f"{server.url}/doubao/v1", web_search=True)
    assert DIALECTS["doubao"].url(platform).endswith("/doubao/v1/bots/chat/completions")
    plain = _ask(server, http, "doubao", "no-bot")
    assert "references" not in plain.payloads[0] and "bot_usage" not in plain.payloads[0]
    body = DIALECTS["openai"].body(_platform("openai"), QUESTION)
    assert http.post(f"{server.url}/openai/v1/bots/chat/completions", json=body).status_code == 404


def test_sources_are_mostly_third_party_and_sometimes_a_brands_own_site(server, http):
    brand_domains = {d for b in EXAMPLE.brands for d in b.domains}
    hosts = []
    for number, question in enumerate(EXAMPLE.questions[:12]):
        exchange = _ask(server, http, "ernie", f"sites-{number}", question.text, web_search=True)
        hosts += [re.sub(r"^https://(www\.)?([^/]+)/.*$", r"\2", url) for url in _raw_sources("ernie", exchange.payloads[0])]
    own = [h for h in hosts if any(h == d or h.endswith("." + d) for d in brand_domains)]
    assert 0 < len(own) < len(hosts) / 2
    assert {"zhihu.com", "baike.baidu.com", "36kr.com"} & {h.removeprefix("zhuanlan.") for h in hosts}


@pytest.mark.parametrize("name", THINKING)
def test_thinking_switched_on_brings_reasoning(server, http, name):
    exchange = _ask(server, http, name, "think", thinking="enabled")
    answer, payload = exchange.answer, exchange.payloads[0]
    _usage_adds_up(payload)
    message = payload["choices"][0]["message"]
    if name == "openai":  # reasoning tokens only, never the reasoning
        assert "reasoning_content" not in message and answer.reasoning_text is None
    else:
        assert message["reasoning_content"] and answer.reasoning_text == message["reasoning_content"]
    if name in ("openai", "deepseek", "qwen", "doubao"):
        assert 0 < answer.usage.reasoning_tokens < answer.usage.completion_tokens
    off = _ask(server, http, name, "think", thinking="disabled")
    assert off.answer.reasoning_text is None and "reasoning_content" not in off.payloads[0]["choices"][0]["message"]


@pytest.mark.parametrize("name", NAMES)
def test_moderation_as_each_platform_does_it(server, http, name):
    settings = {"web_search": True} if name in SEARCHING else {}
    first = _ask(server, http, f"{name}-mod", "mod", **settings)
    again = _ask(server, http, f"{name}-mod", "mod", **settings)
    expected_error = {"qwen": (400, "data_inspection_failed"), "doubao": (400, "SensitiveContentDetected"),
                      "kimi": (400, "content_filter"), "deepseek": (400, "invalid_request_error")}
    if name in expected_error:
        assert (first.last.status_code, first.error) == (expected_error[name][0],
                                                         (ErrorClass.MODERATED, expected_error[name][1]))
        assert len(first.responses) == 1  # Kimi rejects before any search
        if name == "deepseek":
            assert first.last.json()["error"]["message"] == "Content Exists Risk"
    else:
        assert first.answer.outcome == MODERATED and first.answer.citations == []
        choice = first.payloads[0]["choices"][0]
        if name == "ernie":
            assert choice["flag"] != 0 and choice["ban_round"] == -1
        elif name == "hunyuan":
            assert choice["finish_reason"] == "sensitive"
        else:
            assert choice["finish_reason"] == "content_filter" and not choice["message"]["content"]
    assert again.last.status_code == first.last.status_code  # the verdict is the request's, not the attempt's
    stats = _stats(server, f"{name}-mod")
    assert stats["moderated"] == 2 and stats["answered_by_key"] == {"mod": 2}


MARKERS = re.compile(r" ?\(\[[^\]]+\]\([^)]+\)\)|\^?\[\^?(citation:)?\d+\^?\]\^?")


def _answered_directly(app: SimulatorApp, name: str, key: str, **settings) -> str:
    """The answer's text, from handle_chat without the socket (the same app, another fate)."""
    platform = _platform(name, f"http://127.0.0.1:1/{name}/v1", **settings)
    dialect = DIALECTS[platform.dialect]
    body, payloads = dialect.body(platform, QUESTION), []
    while body is not None:
        path = dialect.url(platform).removeprefix("http://127.0.0.1:1")
        sent = httpx.Request("POST", dialect.url(platform), json=body).content  # the bytes the client sends
        reply = handle_chat(app, name, {"idempotency-key": key, PATH_HEADER: path}, sent)
        payloads.append(json.loads(reply.body))
        body = dialect.next_round(body, payloads[-1])
    return dialect.read_rounds(payloads).text


@pytest.mark.parametrize("name", NAMES)
def test_truncation_stops_at_length(server, http, name):
    settings = {"web_search": True} if name in SEARCHING else {}
    cut = _ask(server, http, f"{name}-cut", "cut", **settings)
    assert cut.answer.outcome == TRUNCATED and cut.answer.finish_reason == "length"
    assert cut.answer.tool_rounds == (1 if name == "kimi" else 0)
    _usage_adds_up(cut.payloads[-1])
    assert _ask(server, http, f"{name}-cut", "cut", **settings).answer.text == cut.answer.text  # retries: the same
    assert _stats(server, f"{name}-cut")["truncated"] == 2
    # The same request where nothing is cut: the cut text is the start of the whole one.
    whole = _answered_directly(SimulatorApp(SimulatorSettings(seed=7, default=FAST), CONFIG), f"{name}-cut", "cut", **settings)
    cut_text = MARKERS.sub("", cut.answer.text)
    assert len(cut_text) < len(MARKERS.sub("", whole)) and MARKERS.sub("", whole).startswith(cut_text[:-6])


BILLING_STATUS = {"deepseek": 402, "qwen": 400, "kimi": 429, "doubao": 403, "openai": 429,
                  "ernie": 402, "hunyuan": 402, "perplexity": 402}


@pytest.mark.parametrize("name", NAMES)
def test_billing_error_until_a_top_up(server, http, name):
    owed = f"{name}-owed"
    blocked = _ask(server, http, owed, "bill")
    assert blocked.last.status_code == BILLING_STATUS[name] and blocked.error[0] is ErrorClass.BILLING
    assert _ask(server, http, owed, "bill-2").error[0] is ErrorClass.BILLING  # every request, not one
    assert http.post(f"{server.url}/_admin/{owed}/topup").status_code == 200
    assert _ask(server, http, owed, "bill").answer.outcome == "answered"
    assert _stats(server, owed)["billing_errors"] == 2


def _first_round(server, http, key: str) -> tuple[dict, dict, str]:
    platform = _platform("kimi", f"{server.url}/kimi/v1", web_search=True)
    body = DIALECTS["kimi"].body(platform, QUESTION)
    response = http.post(DIALECTS["kimi"].url(platform), json=body, headers={"Idempotency-Key": key})
    return body, response.json(), DIALECTS["kimi"].url(platform)


def test_kimis_tool_loop_needs_the_arguments_back_verbatim(server, http):
    body, payload, url = _first_round(server, http, "loop")
    choice = payload["choices"][0]
    assert choice["finish_reason"] == "tool_calls"
    (call,) = choice["message"]["tool_calls"]
    assert call["type"] == "builtin_function" and call["function"]["name"] == "$web_search"
    arguments = json.loads(call["function"]["arguments"])
    assert arguments["search_result"]["search_id"] and arguments["usage"]["total_tokens"] > 0
    _usage_adds_up(payload)

    following = DIALECTS["kimi"].next_round(body, payload)
    final = http.post(url, json=following, headers={"Idempotency-Key": "loop"})
    assert final.status_code == 200 and final.json()["choices"][0]["finish_reason"] == "stop"
    assert final.json()["usage"]["prompt_tokens"] > arguments["usage"]["total_tokens"]

    changed = json.loads(json.dumps(following))
    changed["messages"][-1]["content"] = json.dumps(arguments, separators=(",", ":"))  # same JSON, other bytes
    refused = http.post(url, json=changed, headers={"Idempotency-Key": "loop"})
    assert refused.status_code == 400
    assert DIALECTS["kimi"].classify_error(400, refused.text)[0] is ErrorClass.BAD_REQUEST
    without_assistant = json.loads(json.dumps(following))
    del without_assistant["messages"][-2]
    assert http.post(url, json=without_assistant, headers={"Idempotency-Key": "loop"}).status_code == 400
    stats = _stats(server, "kimi")
    assert stats["received_by_key"]["loop"] == 1  # the later rounds are rounds, not requests
    assert stats["tool_rounds"] >= 3 and stats["tool_echo_rejected"] == 2
    assert stats["answered_by_key"]["loop"] == 1


@pytest.mark.slow  # over a second by design
def test_deepseek_keeps_a_slow_request_alive_with_blank_lines(server, http):
    platform = _platform("deepseek-slow", f"{server.url}/deepseek-slow/v1")
    started = time.monotonic()
    with http.stream("POST", DIALECTS["deepseek"].url(platform), json=DIALECTS["deepseek"].body(platform, QUESTION),
                     headers={"Idempotency-Key": "slow"}) as response:
        headers_after = time.monotonic() - started
        raw = response.read()
    # The headers come before the answer is ready (2 s), then a blank line every 0.5 s until it is.
    assert response.status_code == 200 and headers_after < 2.0
    assert raw.startswith(b"\n\n\n\n{")
    answer = DIALECTS["deepseek"].read(json.loads(raw.decode()))  # as the client parses it
    assert answer.outcome == "answered" and answer.text
    fast = _ask(server, http, "deepseek", "slow")
    assert fast.last.content.startswith(b"{")  # a quick answer has none


def test_token_bucket_sends_each_platforms_rate_limit_headers(server, http):
    first, limited = _ask(server, http, "openai-bucket", "b1"), _ask(server, http, "openai-bucket", "b2")
    assert first.last.headers["x-ratelimit-limit-requests"] == "1"
    assert first.last.headers["x-ratelimit-remaining-requests"] == "0"
    assert re.fullmatch(r"(\d+h)?(\d+m)?\d+(\.\d+)?(ms|s)", first.last.headers["x-ratelimit-reset-requests"])
    assert limited.last.status_code == 429 and limited.error[0] is ErrorClass.RATE_LIMITED
    assert int(limited.last.headers["retry-after"]) >= 1
    ernie = _ask(server, http, "ernie-bucket", "b1").last.headers
    assert ernie["X-Ratelimit-Limit-Requests"] == "1" and ernie["X-Ratelimit-Remaining-Requests"] == "0"
    kimi = _ask(server, http, "kimi-bucket", "b1").last.headers
    assert kimi["X-RateLimit-Limit"] == "1" and kimi["X-RateLimit-Remaining"] == "0" and "X-RateLimit-Reset" in kimi
    limited = _ask(server, http, "kimi-bucket", "b2")
    assert limited.last.json()["error"]["type"] == "rate_limit_reached_error"


def test_fixed_window_allows_exactly_n_per_window_and_says_so_in_the_chosen_header(server, http):
    for _ in range(3):  # a window boundary crossed mid-test: try again in the next one
        window = int(time.time() // WINDOW_S)
        sent = {name: [_ask(server, http, name, f"w{window}-{i}") for i in range(WINDOW_LIMIT + 1)]
                for name in WINDOWED}
        if int(time.time() // WINDOW_S) == window:
            break
    else:
        pytest.fail("could not send within one window")
    for name, header in WINDOWED.items():
        statuses = [exchange.last.status_code for exchange in sent[name]]
        assert statuses == [200] * WINDOW_LIMIT + [429], name
        refused = sent[name][-1]
        assert refused.error[0] is ErrorClass.RATE_LIMITED
        retry_headers = {h for h in refused.last.headers if "retry-after" in h}
        if header is None:
            assert retry_headers == set()
        else:
            assert retry_headers == {header}
            assert 1 <= int(refused.last.headers[header]) <= WINDOW_S + 1
    assert [e.last.headers["x-ratelimit-remaining-requests"] for e in sent["openai-window"][:WINDOW_LIMIT]] == \
        [str(WINDOW_LIMIT - n) for n in range(1, WINDOW_LIMIT + 1)]
    assert _stats(server, "ernie-window")["window_limited"] >= 1


def test_a_fixed_window_grants_again_when_the_next_window_begins():
    window = FixedWindow(limit=2, window_s=60)
    start = 60 * 1_000_000 + 10  # ten seconds into a calendar window
    assert [window.take(start + i)[:2] for i in range(3)] == [(True, 1), (True, 0), (False, 0)]
    assert window.take(start + 3)[2] == pytest.approx(47)  # seconds until the window turns
    assert window.take(start + 50)[:2] == (True, 1)  # the next window



def test_the_dialect_comes_from_the_config_else_the_name_else_openai():
    config = VisibilityConfig(EXAMPLE.directory, EXAMPLE.catalog, EXAMPLE.questions,
                              (Platform(name="moonshot", base_url="http://127.0.0.1:1/moonshot/v1", model="kimi-k2",
                                        dialect="kimi"),))
    app = SimulatorApp(SimulatorSettings(), config)
    assert app.dialect("moonshot").name == "kimi"
    assert app.dialect("ernie").name == "ernie"
    assert app.dialect("somewhere").name == "openai"
    assert SimulatorApp(SimulatorSettings()).dialect("qwen").name == "qwen"
