"""Every dialect reads the platform's documented response and error bodies (tests/fixtures/dialects/,
each with its source) into exactly the expected normalized answer or error class, and asks with
the documented switches for web search and thinking."""

import json
from dataclasses import asdict
from pathlib import Path

import pytest

from visibility_assets.collect.dialects import DIALECTS, DialectError
from visibility_assets.config import Platform

FIXTURES = Path(__file__).parents[1] / "fixtures" / "dialects"


def _fixture(dialect: str) -> dict:
    return json.loads((FIXTURES / f"{dialect}.json").read_text(encoding="utf-8"))


def _cases():
    """Every case of every fixture, except those of a protocol the adapter does not speak
    (e.g. Tencent's signed API 3.0 beside Hunyuan's OpenAI-compatible endpoint)."""
    for path in sorted(FIXTURES.glob("*.json")):
        fixture = json.loads(path.read_text(encoding="utf-8"))
        for case in fixture["cases"]:
            if case.get("protocol", "compatible") not in DIALECTS[fixture["dialect"]].protocols:
                continue
            yield pytest.param(fixture["dialect"], case, id=f"{fixture['dialect']}: {case['name']}"[:90])


def _body_text(case: dict) -> str:
    body = case["body"]
    return body if isinstance(body, str) else json.dumps(body, ensure_ascii=False)


@pytest.mark.parametrize(("dialect", "case"), _cases())
def test_the_dialect_reads_each_documented_body_exactly(dialect, case):
    adapter, expected = DIALECTS[dialect], case["expected"]
    if expected["kind"] == "error" and case["status"] != 200:
        error_class, code = adapter.classify_error(case["status"], _body_text(case))
        assert (error_class.value, code) == (expected["error"], expected["code"])
        return
    payload = json.loads(_body_text(case))
    if expected["kind"] == "error":  # a 200 whose content says the platform failed
        with pytest.raises(DialectError) as raised:
            adapter.read(payload)
        assert (raised.value.error_class.value, raised.value.code) == (expected["error"], expected["code"])
        return
    answer = adapter.read_rounds([*case.get("prior_rounds", []), payload])
    if "echo_message" in case:  # a tool round: the next request echoes the call's arguments byte for byte
        following = adapter.next_round({"messages": [{"role": "user", "content": "q"}]}, payload)
        assert following["messages"][-1] == case["echo_message"]
        assert following["messages"][-2] == payload["choices"][0]["message"]
    got = {"outcome": answer.outcome, "text": answer.text, "reasoning_text": answer.reasoning_text,
           "finish_reason": answer.finish_reason, "model": answer.model,
           "citations": [{k: v for k, v in asdict(c).items() if k != "source"} for c in answer.citations],
           "search_used": answer.search_used, "usage": asdict(answer.usage), "search_queries": answer.search_queries}
    # No documented body shows the queries a search ran (Kimi's arguments: only its id and tokens).
    assert got == {"search_queries": [], **{k: v for k, v in expected.items() if k != "kind"}}


def _kimi_search_round(arguments: str) -> dict:
    call = {"index": 0, "id": "t-web_search-1", "type": "builtin_function",
            "function": {"name": "$web_search", "arguments": arguments}}
    return {"choices": [{"index": 0, "finish_reason": "tool_calls",
                         "message": {"role": "assistant", "content": "", "tool_calls": [call]}}]}


def test_kimis_search_queries_are_read_from_the_arguments_where_they_carry_one():
    kimi, answer = DIALECTS["kimi"], {"choices": [{"message": {"content": "ok"}, "finish_reason": "stop"}]}
    rounds = [_kimi_search_round(json.dumps({"search_result": {"search_id": "s1"}, "query": "云数据库 推荐"})),
              _kimi_search_round(json.dumps({"search_result": {"search_id": "s2", "queries": ["RDS 价格", " "]}})),
              answer]
    read = kimi.read_rounds(rounds)
    assert read.search_queries == ["云数据库 推荐", "RDS 价格"] and read.usage.search_count == 2
    # What the platform sends is untrusted: arguments that are not JSON, or hold no strings, give nothing.
    for hostile in ("not json", "[1, 2]", json.dumps({"query": 7, "search_result": "x"}), ""):
        assert kimi.read_rounds([_kimi_search_round(hostile), answer]).search_queries == []
    assert len(kimi.read_rounds([_kimi_search_round(json.dumps({"query": "x" * 10_000})), answer])
               .search_queries[0]) == 500


def _platform(dialect: str, **settings) -> Platform:
    return Platform(name="p", base_url="https://example.invalid/v1", model="m", dialect=dialect, **settings)


@pytest.mark.parametrize("dialect", sorted(DIALECTS))
def test_the_request_carries_the_documented_switches(dialect):
    request = _fixture(dialect)["request"]
    adapter = DIALECTS[dialect]
    for setting, documented in (({"web_search": True}, request.get("web_search")),
                                ({"thinking": "enabled"}, request.get("thinking_enabled")),
                                ({"thinking": "disabled"}, request.get("thinking_disabled"))):
        if not documented:
            continue
        body = adapter.body(_platform(dialect, **setting), "问题")
        switches = {k: v for k, v in documented.items() if k != "model"}  # the model is the user's choice
        assert {k: body.get(k) for k in switches} == switches, setting
