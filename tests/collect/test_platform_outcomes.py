"""Each platform's dialect end to end: real Dagster runs against the simulated platforms (in
process): web search and its sources, costs, moderation and truncation as outcomes, billing
stops, Kimi's tool loop; and the collector's own loops over loopback."""

import json
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import date
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
import yaml
from dagster import Backoff, DagsterEventType, DagsterInstance, RetryPolicy, materialize

from tests.pipeline import materialize_for, pipeline, read_warehouse
from visibility_assets.collect.cost import request_cost
from visibility_assets.config import EXAMPLE_CONFIG_DIR, load_config
from visibility_assets.core.answers import Usage
from visibility_assets.core.partitions import partition_key, partition_tags
from visibility_assets.tools.simulator.behaviour import PlatformBehaviour, SimulatorSettings
from visibility_assets.tools.simulator.transport import IN_PROCESS_URL

from tests.conftest import FAST, in_process, write_config

DAY = "2026-11-04"
STRUCTURED_SOURCES = ("ernie", "hunyuan", "doubao")  # the example platforms whose API returns sources


def _rows(sql, params=None):
    with read_warehouse() as conn:
        return conn.execute(sql, params).fetchall()


def _stats(simulated) -> dict:
    return simulated.app.stats_json()


@pytest.fixture
def platforms_server(tmp_path, monkeypatch, request):
    """Simulated platforms (in process) with the behaviours the test names, and the example
    config pointed at them."""
    behaviours = getattr(request, "param", {})
    with in_process(SimulatorSettings(seed=3, default=FAST, platforms=dict(behaviours))) as simulated:
        directory = write_config(tmp_path / "config", IN_PROCESS_URL, questions=10, rounds=2)
        monkeypatch.setenv("VISIBILITY_CONFIG_DIR", str(directory))
        yield simulated


@pytest.mark.dagster
def test_web_search_sources_search_use_and_costs_as_each_platform_gives_them(visibility_home, platforms_server):
    config = load_config()
    repository = pipeline().get_repository_def()
    assets = list({id(a): a for a in repository.assets_defs_by_key.values()}.values())
    # The raw answers and the cost models that read them: not the whole nightly chain.
    selection = [key for key in repository.assets_defs_by_key
                 if key.path[-1] in ("raw_ai_responses", "int_partition_requests", "collection_costs")]
    for platform in config.platform_names:
        run = materialize(assets, selection=selection, partition_key=partition_key(DAY, platform),
                          instance=DagsterInstance.ephemeral(), tags=partition_tags(DAY, platform))
        assert run.success
    rows = _rows("SELECT platform, search_used, len(list_filter(citations, lambda c: c.source = 'platform')),"
                 " outcome FROM raw_ai_responses")
    by_platform = {}
    for platform, search_used, platform_sources, outcome in rows:
        by_platform.setdefault(platform, []).append((search_used, platform_sources, outcome))
    for platform in STRUCTURED_SOURCES:
        answered = [r for r in by_platform[platform] if r[2] == "answered"]
        assert answered and all(used and sources > 0 for used, sources, _ in answered), platform
    assert all(used for used, _, outcome in by_platform["kimi"] if outcome == "answered")  # its tool round
    assert not any(used or sources for used, sources, _ in by_platform["qwen"])  # compatible mode: no sign
    assert not any(used for used, _, _ in by_platform["deepseek"])  # no search in its Chat Completions

    # Every stored cost is the hand computation from the answer's usage and prices.yaml.
    for platform, model, prompt, completion, cached, searches, used, cost, currency, received in _rows(
            "SELECT platform, model, prompt_tokens, completion_tokens, cached_tokens, search_count, search_used,"
            " cost, currency, received_at FROM raw_ai_responses"):
        price = config.price(platform, model, date.fromisoformat(DAY))
        expected = request_cost(price, Usage(prompt, completion, None, cached, None, searches), used, received)
        by_hand = ((prompt - (cached or 0)) * price.input_per_mtok
                   + (cached or 0) * (price.cached_input_per_mtok or price.input_per_mtok)
                   + completion * price.output_per_mtok) / 1e6 + (searches if searches is not None else int(used)) * price.per_search
        assert cost == pytest.approx(expected) == pytest.approx(by_hand) and currency == price.currency
    totals = _rows("SELECT platform, cost FROM collection_costs ORDER BY platform")
    assert dict(totals) == pytest.approx(dict(_rows("SELECT platform, sum(cost) FROM raw_ai_responses GROUP BY 1")))


@pytest.mark.dagster
@pytest.mark.parametrize("platforms_server", [{"qwen": PlatformBehaviour(
    latency_s=(0.001, 0.01), moderation_rate=0.2, truncation_rate=0.2)}], indirect=True)
def test_moderated_and_truncated_answers_are_outcomes_stored_once_and_measured(visibility_home, platforms_server):
    run = materialize_for(["fct_invalid_answers"], DAY, "qwen")
    assert run.success
    outcomes = dict(_rows("SELECT outcome, count(*) FROM raw_ai_responses GROUP BY 1"))
    assert outcomes.get("moderated", 0) > 0 and outcomes.get("truncated", 0) > 0, outcomes
    retries = _rows("SELECT count(*) FROM http_attempts a JOIN raw_ai_responses r USING (request_key)"
                    " WHERE r.outcome IN ('moderated', 'truncated') AND a.attempt > 1")
    assert retries == [(0,)]  # never retried
    assert _rows("SELECT count(*), count(DISTINCT request_key) FROM raw_ai_responses")[0] == (20, 20)  # stored once
    metadata = {k: v.value for k, v in run.asset_materializations_for_node("raw_ai_responses")[0].metadata.items()}
    for outcome in ("moderated", "truncated"):
        share = _rows("SELECT answers, share, share_low, share_high FROM fct_invalid_answers"
                      " WHERE platform = 'qwen' AND reason = $reason", {"reason": outcome})
        (answers, value, low, high), = share
        assert answers == outcomes[outcome] and low < value < high, outcome
        assert metadata[outcome] == outcomes[outcome]
    assert metadata["failed"] == 0  # outcomes, not failures


@pytest.mark.dagster
@pytest.mark.parametrize("platforms_server", [{"deepseek": PlatformBehaviour(
    latency_s=(0.001, 0.01), billing_error=True)}], indirect=True)
def test_a_billing_error_stops_the_platform_after_one_request_and_the_top_up_resumes_it(
        visibility_home, platforms_server):
    defs = pipeline(RetryPolicy(max_retries=2, delay=0.1, backoff=Backoff.LINEAR))
    instance = DagsterInstance.ephemeral()
    result = materialize_for(["raw_ai_responses"], DAY, "deepseek", instance, defs)
    assert not result.success
    assert _stats(platforms_server)["deepseek"]["received"] == 1
    assert DagsterEventType.STEP_UP_FOR_RETRY not in [e.event_type for e in result.all_events]
    message = result.get_step_failure_events()[0].event_specific_data.error.message
    assert "deepseek" in message and "balance or quota" in message
    assert materialize_for(["raw_ai_responses"], DAY, "kimi", instance, defs).success  # the others run on

    platforms_server.app.top_up("deepseek")  # what POST /_admin/deepseek/topup does
    planned = len(load_config().questions) * load_config().platform("deepseek").rounds
    assert materialize_for(["raw_ai_responses"], DAY, "deepseek", instance, defs).success
    stats = _stats(platforms_server)["deepseek"]
    assert stats["received"] == 1 + planned and stats["duplicates"] == 0


@pytest.mark.dagster
def test_kimis_search_tool_loop_echoes_the_arguments_and_adds_up_usage(visibility_home, platforms_server):
    assert materialize_for(["raw_ai_responses"], DAY, "kimi").success
    rows = _rows("SELECT payload_json, prompt_tokens, completion_tokens, total_tokens, search_count, search_queries"
                 " FROM raw_ai_responses WHERE platform = 'kimi' AND outcome = 'answered'")
    assert rows
    issued = platforms_server.app.tool_calls
    for payload, prompt, completion, total, searches, queries in rows:
        rounds = json.loads(payload)
        assert isinstance(rounds, list) and len(rounds) == 2  # the tool call, then the answer
        assert prompt == sum(r["usage"]["prompt_tokens"] for r in rounds)
        assert completion == sum(r["usage"]["completion_tokens"] for r in rounds) and total == prompt + completion
        assert searches == 1
        # The query stored is the one in the arguments the simulator issued and saw echoed back.
        call = rounds[0]["choices"][0]["message"]["tool_calls"][0]
        seen = json.loads(issued[("kimi", call["id"])].arguments)
        assert queries == [seen["query"]] and seen["query"]
    assert _rows("SELECT DISTINCT tool_rounds FROM http_attempts WHERE platform = 'kimi' AND error_class IS NULL") \
        == [(1,)]
    assert _stats(platforms_server)["kimi"]["duplicates"] == 0


def test_example_config_names_each_platforms_dialect():
    platforms = yaml.safe_load((EXAMPLE_CONFIG_DIR / "platforms.yaml").read_text(encoding="utf-8"))["platforms"]
    assert {p["name"]: p["dialect"] for p in platforms} == {p["name"]: p["name"] for p in platforms}


class _QuietHandler(BaseHTTPRequestHandler):
    """A scripted platform's handler (its do_POST the script), logging nothing."""

    def log_message(self, *args):
        pass


def _send_json(handler: BaseHTTPRequestHandler, status: int, body: bytes) -> None:
    handler.send_response(status)
    handler.send_header("Content-Type", "application/json")
    handler.send_header("Content-Length", str(len(body)))
    handler.end_headers()
    handler.wfile.write(body)


@contextmanager
def _serving(handler: type[BaseHTTPRequestHandler]) -> Iterator[int]:
    """A scripted platform on a loopback port, for the duration of the block."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield server.server_address[1]
    finally:
        server.shutdown()


@pytest.mark.loopback
def test_a_tool_loop_that_never_ends_is_cut_at_the_cap_and_not_retried(tmp_path):
    """A platform that keeps asking for $web_search is asked 1 + max_tool_rounds times, once."""
    from visibility_assets.collect.collector import CollectionSettings, collect_partition
    from visibility_assets.collect.dialects import DIALECTS
    from visibility_assets.collect.journal import CollectionJournal
    from visibility_assets.warehouse.lake import LakeSettings

    received = []

    class AlwaysSearching(_QuietHandler):
        def do_POST(self):
            received.append(json.loads(self.rfile.read(int(self.headers["Content-Length"]))))
            call = {"index": 0, "id": f"t-{len(received)}", "type": "builtin_function",
                    "function": {"name": "$web_search", "arguments": "{\"search_result\": {\"search_id\": \"x\"}}"}}
            body = json.dumps({"id": "c", "object": "chat.completion", "model": "kimi-k2-turbo-preview",
                               "choices": [{"index": 0, "finish_reason": "tool_calls",
                                            "message": {"role": "assistant", "content": "", "tool_calls": [call]}}],
                               "usage": {"prompt_tokens": 10, "completion_tokens": 2, "total_tokens": 12}}).encode()
            _send_json(self, 200, body)

    with _serving(AlwaysSearching) as port:
        directory = write_config(tmp_path / "config", port, questions=1, rounds=1)
        config = load_config(directory)
        with CollectionJournal(LakeSettings.from_env(tmp_path), DAY, "kimi") as journal:
            report = collect_partition(config, config.platform("kimi"), DAY, "run", journal,
                                       CollectionSettings(failure_share_limit=1.0))
    assert len(received) == 1 + DIALECTS["kimi"].max_tool_rounds
    assert report.failed == 1 and report.failed_by_class == {"client_error": 1} and report.attempts == 1


SEARCH_ARGUMENTS = json.dumps({"search_result": {"search_id": "s-1"}})


def _kimi_completion(message: dict, finish_reason: str, prompt_tokens: int) -> bytes:
    return json.dumps({"id": "c", "object": "chat.completion", "model": "kimi-k2-turbo-preview",
                       "choices": [{"index": 0, "finish_reason": finish_reason, "message": message}],
                       "usage": {"prompt_tokens": prompt_tokens, "completion_tokens": 5,
                                 "total_tokens": prompt_tokens + 5}}).encode()


def _kimi_search_call() -> bytes:
    """Kimi's first round of a $web_search: the tool call, whose arguments go back as the tool's result."""
    call = {"index": 0, "id": "call-1", "type": "builtin_function",
            "function": {"name": "$web_search", "arguments": SEARCH_ARGUMENTS}}
    return _kimi_completion({"role": "assistant", "content": "", "tool_calls": [call]}, "tool_calls", 10)


@pytest.mark.loopback
def test_the_other_requests_start_once_the_first_tool_loop_has_asked_for_its_tool(tmp_path):
    """The first request goes alone (a bad key costs one refusal); in a tool loop, its first round
    asking for the search shows the key, model and account are good: the others need not wait
    for the search's round too."""
    from visibility_assets.collect.collector import CollectionSettings, collect_partition
    from visibility_assets.collect.journal import CollectionJournal
    from visibility_assets.warehouse.lake import LakeSettings

    questions_at, tool_rounds_answered_at = [], []

    class SlowSearches(_QuietHandler):
        def do_POST(self):
            body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            if body["messages"][-1]["role"] != "tool":
                questions_at.append(time.monotonic())
                _send_json(self, 200, _kimi_search_call())
                return
            time.sleep(0.5)
            tool_rounds_answered_at.append(time.monotonic())
            _send_json(self, 200, _kimi_completion({"role": "assistant", "content": "推荐阿里云。"}, "stop", 2000))

    with _serving(SlowSearches) as port:
        directory = write_config(tmp_path / "config", port, questions=3, rounds=1)
        config = load_config(directory)
        with CollectionJournal(LakeSettings.from_env(tmp_path), DAY, "kimi") as journal:
            report = collect_partition(config, config.platform("kimi"), DAY, "run", journal, CollectionSettings())
    assert report.succeeded == report.planned and len(questions_at) == report.planned >= 3
    assert sorted(questions_at)[1] < min(tool_rounds_answered_at)


@pytest.mark.loopback
def test_a_failed_tool_round_is_sent_again_without_asking_for_the_search_twice(tmp_path):
    """Kimi bills each $web_search call: a 503 on the round that sends the search's arguments back
    is retried as that round, after the tool call already received, not from the question."""
    from visibility_assets.collect.collector import CollectionSettings, collect_partition
    from visibility_assets.collect.journal import CollectionJournal
    from visibility_assets.warehouse.lake import LakeSettings, reading

    questions, tool_rounds = [], []

    class FailsTheFirstToolRound(_QuietHandler):
        def do_POST(self):
            body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            status = 200
            if body["messages"][-1]["role"] != "tool":
                questions.append(body)
                reply = _kimi_search_call()
            else:
                tool_rounds.append(body)
                assert body["messages"][-1]["content"] == SEARCH_ARGUMENTS
                if len(tool_rounds) == 1:
                    status, reply = 503, json.dumps({"error": {"message": "overloaded", "type": "server_error"}}).encode()
                else:
                    reply = _kimi_completion({"role": "assistant", "content": "推荐阿里云。"}, "stop", 2000)
            _send_json(self, status, reply)

    lake = LakeSettings.from_env(tmp_path)
    with _serving(FailsTheFirstToolRound) as port:
        directory = write_config(tmp_path / "config", port, questions=1, rounds=1)
        config = load_config(directory)
        with CollectionJournal(lake, DAY, "kimi") as journal:
            report = collect_partition(config, config.platform("kimi"), DAY, "run", journal, CollectionSettings())
    assert len(questions) == 1 and len(tool_rounds) == 2  # the search asked for once
    assert report.succeeded == 1 and report.attempts == 2
    with reading(lake) as conn:
        attempts = conn.execute("SELECT attempt, http_status, error_class, tool_rounds FROM journal_attempts"
                                " ORDER BY attempt").fetchall()
        (payload, prompt_tokens, searches), = conn.execute(
            "SELECT payload_json, prompt_tokens, search_count FROM journal_answers").fetchall()
    # The second attempt sent one request, the tool round, and no question.
    assert attempts == [(1, 503, "overloaded", None), (2, 200, None, 1)]
    rounds = json.loads(payload)
    assert [r["choices"][0]["finish_reason"] for r in rounds] == ["tool_calls", "stop"]
    assert prompt_tokens == 10 + 2000 and searches == 1  # both rounds billed, each once


@pytest.mark.loopback
def test_the_daily_cost_cap_defers_the_rest_once_the_spend_reaches_it(tmp_path, simulator):
    """Deferred, not lost: the next run (with a higher cap) collects them."""
    from visibility_assets.collect.collector import CollectionSettings, collect_partition
    from visibility_assets.collect.journal import CollectionJournal
    from visibility_assets.warehouse.lake import LakeSettings

    directory = write_config(tmp_path / "config", simulator.port, questions=6, rounds=2, max_cost_per_day=1e-9)
    config = load_config(directory)
    with CollectionJournal(LakeSettings.from_env(tmp_path), DAY, "ernie") as journal:
        capped = collect_partition(config, config.platform("ernie"), DAY, "run-1", journal, CollectionSettings())
        assert capped.succeeded == 1 and capped.cost > 1e-9  # the first answer spends the day's budget
        assert capped.deferred == capped.deferred_by_cost == 11
        assert journal.state_counts() == {"succeeded": 1, "deferred": 11}
    raised = write_config(tmp_path / "raised", simulator.port, questions=6, rounds=2, max_cost_per_day=100)
    config = load_config(raised)
    with CollectionJournal(LakeSettings.from_env(tmp_path), DAY, "ernie") as journal:
        later = collect_partition(config, config.platform("ernie"), DAY, "run-2", journal, CollectionSettings())
    assert later.skipped_done == 1 and later.succeeded == 11


@pytest.mark.loopback
def test_extra_requests_stop_at_the_extra_cost_budget_while_the_nightly_ones_do_not(tmp_path, simulator):
    """extra_cost_per_day caps what event-driven tasks spend; max_cost_per_day still caps the day."""
    from datetime import UTC, datetime

    from visibility_assets.collect.collector import CollectionSettings, collect_partition
    from visibility_assets.collect.journal import CollectionJournal
    from visibility_assets.events.model import Task
    from visibility_assets.warehouse.lake import LakeSettings

    directory = write_config(tmp_path / "config", simulator.port, questions=6, rounds=1, extra_cost_per_day=1e-9)
    config = load_config(directory)
    now = datetime.now(UTC)
    task = Task(task_id="t1", kind="adhoc", date=date.fromisoformat(DAY), platform="ernie", category=None,
                question_ids=[q.id for q in config.questions], first_round=2, rounds=2, event_ids=["e1"],
                reason="test", base_priority=80, urgency=0, sla_deadline=now, created_at=now)
    lake, platform = LakeSettings.from_env(tmp_path), config.platform("ernie")
    with CollectionJournal(lake, DAY, "ernie") as journal:
        nightly = collect_partition(config, platform, DAY, "run-1", journal, CollectionSettings())
        extra = collect_partition(config, platform, DAY, "run-2", journal, CollectionSettings(), task=task)
    assert nightly.succeeded == 6 and nightly.deferred == 0
    assert extra.succeeded == 1 and extra.deferred == extra.deferred_by_cost == 11
