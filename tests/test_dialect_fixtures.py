"""Every dialect reads the platform's documented response and error bodies (tests/fixtures/dialects/,
each with its source) into exactly the expected normalized answer or error class, and asks with
the documented switches for web search and thinking."""

import json
from dataclasses import asdict
from pathlib import Path

import pytest

from visibility_assets.collect.dialects import DIALECTS, DialectError
from visibility_assets.config import Platform

FIXTURES = Path(__file__).parent / "fixtures" / "dialects"


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
           "search_used": answer.search_used, "usage": asdict(answer.usage)}
    assert got == {k: v for k, v in expected.items() if k != "kind"}


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
