"""`visibility replay`: the current analyzer over stored answers, compared with what cleaning
stored. The warehouse is written by the real cleaner over generated answers (bench helpers),
with the SQL models built on it so that mention_metrics exists."""

from __future__ import annotations

import json
import subprocess
import sys
from dataclasses import replace

import pytest

from tests.pipeline import read_warehouse, write_warehouse
from visibility_assets.clean.analyzer import IRRELEVANT, Analysis, Analyzer
from visibility_assets.clean.replay import read_stored, replay
from visibility_assets.clean.samples import SampleCleaner
from visibility_assets.cli.main import main
from visibility_assets.config import load_config
from visibility_assets.measure.project import load_project
from visibility_assets.measure.runner import build_model, create_macros
from visibility_assets.tools.bench import LAST_DAY
from visibility_assets.tools.bench.replay import TopRanksAnalyzer as BenchTopRanksAnalyzer
from visibility_assets.tools.bench.replay import seed_cleaned_answers
from visibility_assets.warehouse.db import ensure_table
from visibility_assets.warehouse.tables import COLLECTION_TABLES, LABEL_REVIEWS, RAW_AI_RESPONSES

from tests.conftest import write_config

ANSWERS = 288  # 12 questions x 2 rounds x 6 platforms x 2 days
GUARDED = ("cleaned_samples", "sample_brand_results", "entity_matches", "mention_metrics")
RANK_LIMIT = 2


class TopRanksAnalyzer(BenchTopRanksAnalyzer):
    """Changed rule: a list rank past RANK_LIMIT is not recorded."""

    rank_limit = RANK_LIMIT


class BrandlessIsIrrelevantAnalyzer(Analyzer):
    """Changed rule: an answer that names no brand of its category is irrelevant."""

    def analyze(self, answer: str, question: str, category: str) -> Analysis:
        analysis = super().analyze(answer, question, category)
        return analysis.as_invalid(IRRELEVANT) if analysis.valid and not analysis.mentioned else analysis


def cleaner_with(analyzer_class):
    def factory(catalog):
        cleaner = SampleCleaner(catalog, "test-replay")
        cleaner.analyzer = analyzer_class(catalog)
        return cleaner
    return factory


def build_metrics() -> None:
    """Every SQL model over every cleaned partition, as the measure assets build them."""
    project = load_project()

    def build(conn) -> None:
        create_macros(conn, project)
        for table in COLLECTION_TABLES:
            ensure_table(conn, table)
        partitions = conn.execute("SELECT DISTINCT date::VARCHAR, platform FROM cleaned_samples").fetchall()
        for model in project.models.values():
            build_model(conn, model, partitions, "test-metrics")

    write_warehouse(build)


@pytest.fixture(scope="module")
def warehouse(tmp_path_factory):
    """One cleaned warehouse for the module (read by every test; only analyzer_replays grows)."""
    root = tmp_path_factory.mktemp("replay")
    with pytest.MonkeyPatch.context() as env:
        env.setenv("VISIBILITY_HOME", str(root / "home"))
        env.setenv("DAGSTER_HOME", str(root / "home" / "dagster_home"))
        env.setenv("VISIBILITY_CONFIG_DIR", str(write_config(root / "config", 1)))
        config = load_config()
        assert seed_cleaned_answers(config, ANSWERS) == ANSWERS
        build_metrics()
        yield config


def scalar(sql: str, params: dict | None = None):
    with read_warehouse() as conn:
        return conn.execute(sql, params).fetchone()[0]


def fingerprints() -> dict[str, tuple]:
    """Row count and an order-independent checksum of each table the metrics read or are."""
    with read_warehouse() as conn:
        # Table names are this module's constants; no value enters the SQL text.
        return {name: conn.execute("SELECT count(*), sum(hash(t)::HUGEINT) FROM " + name + " AS t").fetchone()
                for name in GUARDED}


def run_cli(capsys, *args) -> tuple[int, str, str]:
    status = main(["replay", *args])
    out, err = capsys.readouterr()
    return status, out, err


@pytest.mark.slow  # over a second by design
def test_unchanged_analyzer_reports_no_change_on_any_platform(warehouse):
    with read_warehouse() as conn:
        report = replay(conn, warehouse.catalog)
    assert report.total.answers == ANSWERS and report.skipped_other_config == 0
    assert sorted(report.platforms) == sorted(warehouse.platform_names)
    for platform in report.platforms.values():
        assert (platform.tally.changed, platform.tally.diff_share, platform.examples) == (0, 0.0, [])
    assert {tally.changed for tally in report.days.values()} == {0}


def test_changed_rank_rule_changes_list_rank_only_with_examples(warehouse):
    with read_warehouse() as conn:
        report = replay(conn, warehouse.catalog, analyzer_factory=cleaner_with(TopRanksAnalyzer), examples=3)
    beyond, limit = "FROM sample_brand_results WHERE list_rank > $limit", {"limit": RANK_LIMIT}
    assert report.total.changed_by_field == {"list_rank": scalar("SELECT count(*) " + beyond, limit)}
    assert report.total.changed == scalar("SELECT count(DISTINCT request_key) " + beyond, limit) > 0
    for platform in report.platforms.values():
        assert 0 < len(platform.examples) <= 3
        for example in platform.examples:
            assert example.field == "list_rank" and example.stored > RANK_LIMIT and example.replayed is None
            assert example.platform == platform.platform and example.brand
            assert example.excerpt.strip()
    assert sum(p.tally.answers for p in report.platforms.values()) == ANSWERS


def test_replay_shows_where_the_new_analyzer_disagrees_with_the_reviewers(warehouse, capsys):
    """Reviewers confirmed three stored ranks past the limit; the changed rule drops them."""
    def review(conn) -> None:
        ensure_table(conn, LABEL_REVIEWS)
        conn.execute("INSERT INTO label_reviews (request_key, date, platform, brand, mentioned, mention_count,"
                     " list_rank, recommended, reviewer, reviewers)"
                     " SELECT request_key, date, platform, brand, mentioned, mention_count, list_rank, recommended,"
                     " 'ana', 1 FROM sample_brand_results WHERE list_rank > $limit ORDER BY request_key, brand LIMIT 3",
                     {"limit": RANK_LIMIT})
    write_warehouse(review)
    try:
        with read_warehouse() as conn:
            found = replay(conn, warehouse.catalog, analyzer_factory=cleaner_with(TopRanksAnalyzer)).reviewers
        assert (found.reviewed["list_rank"], found.stored_agrees["list_rank"], found.replayed_agrees["list_rank"]) \
            == (3, 3, 0)
        assert found.reviewed["mentioned"] == found.replayed_agrees["mentioned"] == 3
        assert [(d["label"], d["replayed"]) for d in found.disagreements] == [("list_rank", None)] * 3
        status, out, _ = run_cli(capsys, "--no-record")
        assert status == 0 and "against the reviewers" in out and "reviewed" in out  # the current analyzer: all agree
    finally:
        write_warehouse(lambda conn: conn.execute("DELETE FROM label_reviews"))


def test_changed_validity_rule_changes_valid_and_reason(warehouse):
    with read_warehouse() as conn:
        report = replay(conn, warehouse.catalog, analyzer_factory=cleaner_with(BrandlessIsIrrelevantAnalyzer))
    brandless = scalar("SELECT count(*) FROM cleaned_samples WHERE valid AND brands_mentioned = 0")
    assert brandless > 0
    assert report.total.changed == brandless
    assert report.total.changed_by_field == {"valid": brandless, "invalid_reason": brandless}
    example = next(e for p in report.platforms.values() for e in p.examples if e.field == "valid")
    assert (example.stored, example.replayed, example.brand) == (True, False, None)


def test_sample_is_deterministic_and_since_filters_days(warehouse):
    with read_warehouse() as conn:
        first = [row["request_key"] for row in read_stored(conn, 50, None)]
        again = [row["request_key"] for row in read_stored(conn, 50, None)]
        report = replay(conn, warehouse.catalog, since=LAST_DAY)
    assert first == again and len(set(first)) == 50
    assert report.total.answers == ANSWERS // 2
    assert {day for _, day in report.days} == {LAST_DAY}


def test_samples_of_another_config_version_are_skipped(warehouse):
    other = replace(warehouse.catalog, version="another-version")
    with read_warehouse() as conn:
        report = replay(conn, other, sample=40)
    assert report.total.answers == 0 and report.skipped_other_config == 40
    assert report.days == {}


def test_cli_records_a_summary_and_changes_nothing_the_metrics_read(warehouse, capsys):
    before = fingerprints()
    assert all(count for count, _ in before.values())
    status, out, _ = run_cli(capsys, "--sample", "100")
    assert status == 0
    assert "skipped: other config version: 0" in out and "total" in out
    assert before == fingerprints()
    rows = scalar("SELECT count(*) FROM analyzer_replays WHERE answers > 0 AND changed = 0"
                  " AND changed_by_field = '{}' AND diff_share = 0")
    assert rows == scalar("SELECT count(*) FROM analyzer_replays") > 0


def test_cli_json_is_one_object_and_no_record_writes_nothing(warehouse, capsys):
    recorded = scalar("SELECT count(*) FROM analyzer_replays") if _has_replays() else 0
    status, out, _ = run_cli(capsys, "--format", "json", "--no-record", "--sample", "30")
    assert status == 0
    report = json.loads(out)
    assert report["total"]["answers"] == 30 and report["recorded_rows"] == 0
    assert {p["platform"] for p in report["platforms"]} <= set(warehouse.platform_names)
    assert (scalar("SELECT count(*) FROM analyzer_replays") if _has_replays() else 0) == recorded


def _has_replays() -> bool:
    return bool(scalar("SELECT count(*) FROM information_schema.tables WHERE table_name = 'analyzer_replays'"))


@pytest.mark.parametrize("args, message", [
    (("--sample", "0"), "--sample: must be a positive integer"),
    (("--since", "2026-13-01"), "--since: not a date"),
])
def test_cli_bad_arguments_exit_2(capsys, args, message):
    with pytest.raises(SystemExit) as exited:
        main(["replay", *args])
    assert exited.value.code == 2
    assert message in capsys.readouterr().err


def test_cli_without_a_warehouse_or_cleaned_samples_exits_2(visibility_home, capsys):
    status, out, err = run_cli(capsys)
    assert (status, out) == (2, "") and "no warehouse" in err and "Traceback" not in err
    write_warehouse(lambda conn: conn.execute(RAW_AI_RESPONSES.ddl()))
    status, _, err = run_cli(capsys)
    assert status == 2 and "no cleaned_samples, sample_brand_results yet" in err


@pytest.mark.system
def test_bench_replay_reports_no_change_unchanged_and_a_share_with_the_changed_rule():
    done = subprocess.run([sys.executable, "-m", "visibility_assets.cli", "bench", "replay", "--answers", "300"],
                          capture_output=True, text=True, timeout=300, check=True)
    result = json.loads(done.stdout.strip().splitlines()[-1])
    assert result["answers"] == 300 and result["answers_per_s"] > 0
    assert result["diff_share_unchanged"] == 0.0 and 0 < result["diff_share_changed"] < 1
    assert "bench replay" in done.stderr


def test_a_replay_reading_more_than_the_limit_otherwise_is_a_rule_fault_told_to_rule_webhooks(
        warehouse, receiver, monkeypatch):
    from tests.webhook_receiver import Reply
    from visibility_assets.cli.replay import tell_replay_faults
    from visibility_assets.config.events import Notifications, Webhook

    monkeypatch.setenv("TEST_RULES_URL", f"{receiver.base}/rules")
    monkeypatch.setenv("TEST_BRAND_URL", f"{receiver.base}/brand")
    receiver.on("/rules", Reply(204, ""))
    receiver.on("/brand", Reply(204, ""))
    hooks = (Webhook(name="rules", format="json", url_env="TEST_RULES_URL", classes=("rule",)),
             Webhook(name="brand", format="json", url_env="TEST_BRAND_URL", classes=("brand",)))
    config = replace(warehouse, notifications=Notifications(replay_diff_limit=0.05, webhooks=hooks))
    with read_warehouse() as conn:
        report = replay(conn, warehouse.catalog, analyzer_factory=cleaner_with(TopRanksAnalyzer))
    over = {name for name, p in report.platforms.items() if p.tally.diff_share > 0.05}
    assert over
    tell_replay_faults(report, config)
    with read_warehouse() as conn:
        faults = conn.execute("SELECT platform, fault_class, detail FROM fault_events WHERE kind = 'replay_diff'"
                              ).fetchall()
    assert {platform for platform, *_ in faults} == over and {c for _, c, _ in faults} == {"rule"}
    assert all("read otherwise" in detail for *_, detail in faults)
    assert sorted(r.json["platform"] for r in receiver.to("/rules")) == sorted(over)
    assert receiver.to("/brand") == []
