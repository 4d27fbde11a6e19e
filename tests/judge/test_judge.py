"""The judge (judge.yaml): what it is asked, what of its reply is kept, and its whole path through
the collector against the simulator's judge over loopback HTTP (billing, retries, reuse, cost)."""

from __future__ import annotations

import json
import random

import pytest
import yaml
from dagster import DagsterInstance

from tests.conftest import FAST, write_config
from visibility_assets.config import EXAMPLE_CONFIG_DIR, ConfigError, load_config
from visibility_assets.judge.prompt import InvalidReply, judge_prompt, parse_reply, read_prompt
from visibility_assets.tools.simulator.answers import compose_answer_detailed, sim_brands_by_category
from visibility_assets.tools.simulator.behaviour import PlatformBehaviour, SimulatorSettings
from visibility_assets.tools.simulator.judge import JudgeBook
from visibility_assets.tools.simulator.server import SimulatorServer

ANSWER = "推荐阿里云：稳定性好，文档完善。腾讯云价格偏高。"
DAY, PLATFORM, JUDGE = "2026-11-30", "qwen", "deepseek"


def reply(*labels: tuple) -> str:
    return json.dumps({"brands": [dict(zip(("brand", "sentiment", "role", "claims"), label)) for label in labels]},
                      ensure_ascii=False)


# --- the prompt and the reply -------------------------------------------------------------

def test_a_judge_prompt_carries_its_version_brands_and_answer_and_reads_back():
    prompt = judge_prompt("v1", "哪家云好？", ANSWER, ["阿里云", "腾讯云"])
    assert prompt.startswith("visibility-judge-prompt: v1\n")
    assert read_prompt(prompt) == ("v1", ["阿里云", "腾讯云"], ANSWER)
    assert read_prompt("哪家云好？") is None


def test_a_valid_reply_labels_every_brand_asked_and_keeps_only_quoted_claims():
    text = reply(("阿里云", "positive", "recommended", ["稳定性好", "the best cloud"]),
                 ("腾讯云", "negative", "option", ["价格偏高"]))
    parsed = parse_reply(f"```json\n{text}\n```", ["阿里云", "腾讯云"], ANSWER)
    assert [(v.brand, v.sentiment, v.role, v.claims) for v in parsed.verdicts] == [
        ("阿里云", "positive", "recommended", ("稳定性好",)), ("腾讯云", "negative", "option", ("价格偏高",))]
    assert parsed.claims_dropped == 1  # "the best cloud" is no quote of the answer


@pytest.mark.parametrize(("text", "problem"), [
    ("Sure! Here is my analysis.", "not JSON"),
    ('{"labels": []}', '"brands" list'),
    (reply(("阿里云", "positive", "option", [])), "not labelled: 腾讯云"),
    (reply(("阿里云", "mixed", "option", []), ("腾讯云", "neutral", "option", [])), "sentiment 'mixed'"),
    (reply(("阿里云", "positive", "winner", []), ("腾讯云", "neutral", "option", [])), "role 'winner'"),
    (reply(("阿里云", "positive", "option", []), ("腾讯云", "neutral", "option", []), ("AWS", "neutral", "option", [])),
     "'AWS' was not asked"),
    (reply(("阿里云", "positive", "option", []), ("阿里云", "neutral", "option", []), ("腾讯云", "neutral", "option", [])),
     "labelled twice"),
    (reply(("阿里云", "positive", "option", "稳定"), ("腾讯云", "neutral", "option", [])), "claims is not a list"),
])
def test_a_reply_that_does_not_validate_is_refused_with_its_reason(text, problem):
    with pytest.raises(InvalidReply, match=problem):
        parse_reply(text, ["阿里云", "腾讯云"], ANSWER)


@pytest.mark.parametrize(("content", "problem"), [
    ("judge:\n  platform: chatgpt\n", "judge.platform 'chatgpt' is not a platform of platforms.yaml"),
    ("judge:\n  platform: deepseek\n  prompt_version: v9\n", "judge.prompt_version 'v9' is unknown"),
    ("judge:\n  platform: deepseek\n  share: 1.5\n", "judge.yaml line 3"),
    ("judge:\n  platform: deepseek\n  modle: x\n", "judge.yaml line 3"),
])
def test_a_bad_judge_yaml_is_a_config_error_naming_the_file_and_the_problem(tmp_path, content, problem):
    directory = write_config(tmp_path / "c", 8787)
    (directory / "judge.yaml").write_text(content, encoding="utf-8")
    with pytest.raises(ConfigError, match=problem):
        load_config(directory)


# --- the simulator's judge ------------------------------------------------------------------

def composed_answers(n: int = 200):
    config = load_config(EXAMPLE_CONFIG_DIR)
    brands = sim_brands_by_category(config.catalog)
    for i, question in enumerate(config.questions[:n]):
        yield question, compose_answer_detailed(random.Random(i), question.text, brands[question.category], "qwen")


def test_the_generator_records_a_judgement_for_every_brand_it_writes():
    kinds = {"positive": 0, "neutral": 0, "negative": 0}
    for _, composed in composed_answers():
        judged = {j.brand: j for j in composed.judgements}
        assert set(judged) == set(composed.mentioned)
        for name in composed.advised_against:  # advice against weighs two strengths
            assert judged[name].role == "advised_against" and judged[name].sentiment != "positive"
        for judgement in judged.values():
            kinds[judgement.sentiment] += 1
            assert all(claim in composed.text for claim in judgement.claims)
    assert min(kinds.values()) > 0, kinds  # the generator writes every sentiment


def test_the_simulators_judge_answers_from_the_truth_it_wrote():
    book = JudgeBook()
    honest, careless = PlatformBehaviour(), PlatformBehaviour(judge_error_rate=1.0)
    for question, composed in composed_answers(40):
        if not composed.judgements:
            continue
        book.remember(composed.text, composed)
        brands = [j.brand for j in composed.judgements]
        prompt = judge_prompt("v1", question.text, composed.text, brands)
        truth = {j.brand: j.sentiment for j in composed.judgements}
        got = parse_reply(book.reply(prompt, honest, random.Random(0)), brands, composed.text)
        assert {v.brand: v.sentiment for v in got.verdicts} == truth and got.claims_dropped == 0
        wrong = parse_reply(book.reply(prompt, careless, random.Random(0)), brands, composed.text)
        assert all(v.sentiment != truth[v.brand] for v in wrong.verdicts)
    assert book.unknown == 0


# --- the whole path: collected, cleaned, judged over loopback ----------------------------------

@pytest.fixture
def judged_setup(tmp_path, visibility_home, monkeypatch, request):
    """A simulator on loopback whose deepseek judges (behaviour from the test's param), a config
    with judge.yaml naming it, and a function that materializes qwen's day up to judge_verdicts."""
    judge_behaviour = getattr(request, "param", FAST)
    settings = SimulatorSettings(seed=1, default=FAST, platforms={JUDGE: judge_behaviour})
    with SimulatorServer(settings, load_config(EXAMPLE_CONFIG_DIR)) as server:
        directory = write_config(tmp_path / "config", server.port, questions=6, rounds=2)
        (directory / "judge.yaml").write_text(f"judge:\n  platform: {JUDGE}\n", encoding="utf-8")
        monkeypatch.setenv("VISIBILITY_CONFIG_DIR", str(directory))
        instance = DagsterInstance.ephemeral()

        def run():
            from tests.pipeline import materialize_for
            result = materialize_for(["judge_verdicts"], DAY, PLATFORM, instance=instance)
            assert result.success
            return result

        yield server, run, directory


def table(sql: str) -> list[tuple]:
    from tests.pipeline import read_warehouse
    with read_warehouse() as conn:
        return conn.execute(sql).fetchall()


ELIGIBLE = """SELECT count(DISTINCT request_key) FROM cleaned_samples JOIN sample_brand_results
              USING (request_key, date, platform) WHERE cleaned_samples.valid AND mentioned"""


@pytest.mark.dagster
def test_every_valid_answer_naming_a_brand_is_judged_once_at_its_price_and_never_again(judged_setup):
    server, run, directory = judged_setup
    run()
    eligible = table(ELIGIBLE)[0][0]
    calls = table("SELECT status, requests, reused FROM judge_calls")
    assert eligible > 0 and len(calls) == eligible and set(calls) == {("judged", 1, False)}
    assert server.app.stats[JUDGE].judged == eligible and server.app.judges.unknown == 0
    # every brand the analyzer found is labelled, as the generator wrote it (a judge without errors)
    assert table("""SELECT count(*) FROM sample_brand_results b ANTI JOIN judge_verdicts v USING (request_key, brand)
                    WHERE b.mentioned AND b.valid""") == [(0,)]
    assert table("SELECT DISTINCT judge_platform, judge_model, prompt_version FROM judge_verdicts") == [
        (JUDGE, "deepseek-flash", "v1")]
    # the cost, by hand: the judge's token counts at deepseek-flash's prices.yaml figures
    price = next(p for p in yaml.safe_load((directory / "prices.yaml").read_text(encoding="utf-8"))["prices"]
                 if p["platform"] == JUDGE)
    tokens = table(f"""SELECT sum(prompt_tokens), sum(completion_tokens) FROM journal_answers
                       WHERE platform = 'judge:{PLATFORM}'""")[0]
    by_hand = (tokens[0] * price["input_per_mtok"] + tokens[1] * price["output_per_mtok"]) / 1e6
    assert table("SELECT sum(cost) FROM judge_calls")[0][0] == pytest.approx(by_hand, rel=1e-6)

    run()  # the same day again: nothing is sent, every row is rebuilt from the journal
    assert server.app.stats[JUDGE].judged == eligible
    assert table("SELECT status, count(*) FROM judge_calls GROUP BY 1") == [("judged", eligible)]

    (directory / "judge.yaml").unlink()  # the judge taken out: the day's rows follow judge.yaml
    run()
    assert table("SELECT count(*) FROM judge_calls") == [(0,)] and table("SELECT count(*) FROM judge_verdicts") == [(0,)]


@pytest.mark.dagster
@pytest.mark.parametrize("judged_setup", [PlatformBehaviour(latency_s=(0.001, 0.01), billing_error=True)],
                         indirect=True)
def test_a_judge_in_billing_error_stops_after_one_request_and_the_lexicon_labels_stand(judged_setup):
    server, run, _ = judged_setup
    result = run()
    stats = server.app.stats[JUDGE]
    assert stats.received == 1 and stats.billing_errors == 1
    calls = table("SELECT DISTINCT status, requests FROM judge_calls")
    assert calls == [("unsent", 0)]
    assert all("balance" in error.lower() for (error,) in table("SELECT error FROM judge_calls"))
    assert table("SELECT count(*) FROM judge_verdicts") == [(0,)]
    assert table("SELECT count(*) FROM sample_brand_results WHERE mentioned AND sentiment IS NULL") == [(0,)]
    metadata = result.asset_materializations_for_node("judge_verdicts")[0].metadata
    assert metadata["unsent"].value == table(ELIGIBLE)[0][0] and metadata["requests_sent"].value >= 1
    from tests.pipeline import materialize_for
    assert materialize_for(["fct_mention_metrics"], DAY, PLATFORM).success
    assert table("SELECT DISTINCT sentiment_source FROM fct_mention_metrics WHERE mentioned_answers > 0") == [
        ("analyzer",)]


@pytest.mark.dagster
@pytest.mark.parametrize("judged_setup", [PlatformBehaviour(latency_s=(0.001, 0.01), judge_malformed_rate=1.0)],
                         indirect=True)
def test_a_reply_that_does_not_validate_is_asked_once_more_then_recorded_as_invalid(judged_setup):
    server, run, _ = judged_setup
    run()
    eligible = table(ELIGIBLE)[0][0]
    assert table("SELECT DISTINCT status, requests FROM judge_calls") == [("invalid", 2)]
    assert server.app.stats[JUDGE].judged == 2 * eligible
    assert table("SELECT count(*) FROM judge_verdicts") == [(0,)]
    run()  # invalid twice is final: not asked a third time
    assert server.app.stats[JUDGE].judged == 2 * eligible


@pytest.mark.dagster
@pytest.mark.parametrize("judged_setup", [PlatformBehaviour(latency_s=(0.001, 0.01), judge_error_rate=0.5)],
                         indirect=True)
def test_the_metrics_count_the_judges_label_where_it_gave_one_and_say_so(judged_setup):
    from tests.pipeline import materialize_for
    server, run, _ = judged_setup
    run()
    assert materialize_for(["fct_mention_metrics"], DAY, PLATFORM).success
    # the judge errs on half the brands: where it disagrees with the lexicon, its label is counted
    judge_positive = table("""SELECT brand, count(*) FROM judge_verdicts WHERE sentiment = 'positive'
                              GROUP BY 1 ORDER BY 1""")
    metrics = table("""SELECT brand, positive_sentiment_answers, judge_labelled_answers, mentioned_answers,
                              sentiment_source FROM fct_mention_metrics WHERE mentioned_answers > 0 ORDER BY 1""")
    assert [(b, n) for b, n, *_ in metrics if n] == judge_positive
    assert all(judged == mentioned and source == "judge" for _, _, judged, mentioned, source in metrics)
    lexicon_disagrees = table("""SELECT count(*) FROM judge_verdicts v JOIN sample_brand_results b
                                 USING (request_key, brand) WHERE v.sentiment <> b.sentiment""")[0][0]
    assert lexicon_disagrees > 0  # the figures above are the judge's, not the lexicon's


@pytest.mark.dagster
@pytest.mark.parametrize("judged_setup", [PlatformBehaviour(latency_s=(0.001, 0.01), judge_error_rate=0.3)],
                         indirect=True)
def test_the_agreement_of_judge_and_lexicon_is_cohens_kappa_per_platform_and_week(judged_setup):
    from tests.pipeline import materialize_for
    server, run, _ = judged_setup
    run()
    assert materialize_for(["sentiment_agreement"], DAY, PLATFORM).success
    pairs = table("""SELECT v.sentiment, b.sentiment FROM judge_verdicts v
                     JOIN sample_brand_results b USING (request_key, brand) WHERE b.mentioned AND b.valid""")
    n = len(pairs)
    observed = sum(j == lex for j, lex in pairs) / n
    labels = ("positive", "neutral", "negative")
    chance = sum(sum(j == lab for j, _ in pairs) * sum(lex == lab for _, lex in pairs) for lab in labels) / n / n
    (row,) = table("SELECT platform, labelled_by_both, agreement, chance_agreement, kappa FROM sentiment_agreement")
    assert row[:2] == (PLATFORM, n)
    assert row[2:] == pytest.approx((observed, chance, (observed - chance) / (1 - chance)))


@pytest.mark.dagster
def test_the_report_names_the_judge_beside_its_sentiment_figures_with_its_agreement(judged_setup):
    from dagster import materialize

    from tests.pipeline import materialize_for, partitions, resources
    from visibility_assets.measure.defs import build_sql_assets
    from visibility_assets.measure.project import load_project
    from visibility_assets.report.defs import visibility_report
    server, run, _ = judged_setup
    run()
    every_model = [key.to_user_string() for a in build_sql_assets(partitions(), load_project()) for key in a.keys]
    assert materialize_for(every_model, DAY, PLATFORM).success
    result = materialize([visibility_report], resources=resources())
    path = result.asset_materializations_for_node("visibility_report")[0].metadata["path"].value
    html = open(path, encoding="utf-8").read()
    eligible_mentions = table("SELECT count(*) FROM judge_verdicts")[0][0]
    mentioned = table("SELECT count(*) FROM sample_brand_results WHERE mentioned")[0][0]
    labelled = f"all {mentioned} mentions" if eligible_mentions == mentioned else f"{eligible_mentions} of {mentioned}"
    assert f"<b>Method: the judge model</b> deepseek-flash (prompt v1) labelled {labelled}" in html
    assert "Cohen's κ" in html and f"<td>{PLATFORM}</td><td>deepseek-flash (v1)</td>" in html


def test_the_share_of_answers_judged_is_chosen_by_content_hash_the_same_every_run():
    from visibility_assets.judge.plan import JudgeItem, sampled

    items = [JudgeItem(f"k{i}", DAY, PLATFORM, "cloud", "q", "a", f"{i * 2654435761 % 2**32:08x}" + "0" * 24, ("阿里云",))
             for i in range(2000)]
    chosen = [item for item in items if sampled(item, 0.25)]
    assert 0.22 < len(chosen) / len(items) < 0.28
    assert chosen == [item for item in items if sampled(item, 0.25)] and all(sampled(i, 1.0) for i in items)


@pytest.mark.dagster
def test_the_judges_daily_budget_defers_the_rest_and_says_why(judged_setup):
    server, run, directory = judged_setup
    (directory / "judge.yaml").write_text(f"judge:\n  platform: {JUDGE}\n  max_cost_per_day: 0.0001\n",
                                          encoding="utf-8")
    run()
    statuses = dict(table("SELECT status, count(*) FROM judge_calls GROUP BY 1"))
    assert statuses.get("judged", 0) >= 1 and statuses["unsent"] >= 1
    assert table("SELECT sum(cost) FROM judge_calls")[0][0] >= 0.0001  # the budget was reached, then no more
    errors = {e for (e,) in table("SELECT DISTINCT error FROM judge_calls WHERE status = 'unsent'")}
    assert errors == {"deferred: judge.yaml's max_cost_per_day (0.0001) is spent for the day"}
    assert server.app.stats[JUDGE].judged == statuses["judged"]
