"""The SQL models on a partition built by hand, checked against values computed here."""

import math
import os
import shutil
from datetime import date, timedelta

import pytest
from dagster import DagsterEventType, materialize

from tests.pipeline import read_warehouse, resources
from visibility_assets.config import EXAMPLE_CONFIG_DIR, load_config
from visibility_assets.core.partitions import daily_platform_partitions, partition_key
from visibility_assets.measure.defs import build_sql_assets
from visibility_assets.measure.project import PROJECT_DIR, ModelError, load_project
from visibility_assets.operate.automation import RANGE_END, RANGE_START
from visibility_assets.operate.instance import PLANNED_SUBSET_ENV, get_instance, planned_events_as_subsets
from visibility_assets.warehouse.tables import TABLES

pytestmark = pytest.mark.slow  # servers, processes or Dagster runs: the CI tier

DAY = date(2026, 11, 10)
EXAMPLE_PARTITIONS = daily_platform_partitions(load_config(EXAMPLE_CONFIG_DIR).platform_names)
MODELS = build_sql_assets(EXAMPLE_PARTITIONS)
METRIC_COLUMNS = ("answers, valid_answers, mentioned_answers, mention_rate, mention_rate_low, mention_rate_high,"
                  " share_of_voice, avg_list_rank, top1_rate, top3_rate, recommend_rate, negative_rate,"
                  " citation_rate, own_domain_citation_rate, config_version, analyzer_version")

# (valid, invalid_reason, has_citation, {brand: (mentioned, list_rank, recommended, cites_own_domain)})
ANSWERS = [
    (True, None, True, {"A": (True, 1, True, True), "B": (True, 2, True, False)}),
    (True, None, False, {"A": (True, 3, True, False)}),
    (True, None, True, {"B": (True, 1, True, False), "C": (True, None, False, False)}),
    (True, None, False, {"A": (True, None, False, False)}),
    (True, None, False, {}),
    (False, "refusal", False, {}),
]


def wilson(x, n, z=1.959963984540054):
    p = x / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return centre - half, centre + half


def _write_partition(platform="deepseek", answers=ANSWERS, day=DAY):
    samples, results = [], []
    for i, (valid, reason, cited, brands) in enumerate(answers):
        key = f"{platform}-{day}-{i}"
        samples.append({"request_key": key, "date": day, "platform": platform, "question_id": f"q{i}",
                        "category": "cat", "round": 1, "state": "completed", "valid": valid, "invalid_reason": reason,
                        "brands_mentioned": len(brands), "option_list_kind": None,
                        "citations": ["https://x.test"] if cited else [], "has_citation": cited,
                        "analyzer_version": "1.0.0", "config_version": "cfg1", "run_id": "clean-run", "cleaned_at": None})
        for brand in "ABC":
            mentioned, rank, recommended, own = brands.get(brand, (False, None, None, False))
            results.append({"request_key": key, "date": day, "platform": platform, "category": "cat", "brand": brand,
                            "valid": valid, "has_citation": cited, "mentioned": mentioned, "mention_count": int(mentioned), "first_mention_order": None,
                            "list_rank": rank, "recommended": recommended, "cites_own_domain": own})
    resources()["warehouse"].replace_partitions(
        {name: TABLES[name].from_dicts(rows)
         for name, rows in (("cleaned_samples", samples), ("sample_brand_results", results))},
        [(day.isoformat() if hasattr(day, "isoformat") else day, platform)])


def _materialize(platform="deepseek", assets=MODELS, day=DAY):
    return materialize(assets, partition_key=partition_key(day.isoformat(), platform), instance=get_instance(),
                       resources=resources(), raise_on_error=False)


def _materialize_range(first: date, last: date, platform="deepseek"):
    """One run over the partition range, as a single-run backfill makes it."""
    tags = {RANGE_START: partition_key(first.isoformat(), platform), RANGE_END: partition_key(last.isoformat(), platform)}
    return materialize(MODELS, tags=tags, instance=get_instance(), resources=resources(), raise_on_error=False)


def _metrics():
    with read_warehouse() as conn:
        rows = conn.execute("SELECT brand, " + METRIC_COLUMNS + " FROM mention_metrics ORDER BY brand").fetchall()
    names = ["brand"] + [c.strip() for c in METRIC_COLUMNS.split(",")]
    return {row[0]: dict(zip(names, row)) for row in rows}


def test_every_metric_column_matches_an_independent_computation(visibility_home):
    _write_partition()
    assert _materialize().success
    metrics = _metrics()
    valid, mentions = 5, {"A": 3, "B": 2, "C": 1}
    for brand, x in mentions.items():
        row = metrics[brand]
        low, high = wilson(x, valid)
        assert (row["answers"], row["valid_answers"], row["mentioned_answers"]) == (6, valid, x)
        assert row["mention_rate"] == pytest.approx(x / valid)
        assert row["mention_rate_low"] == pytest.approx(low)
        assert row["mention_rate_high"] == pytest.approx(high)
        assert row["share_of_voice"] == pytest.approx(x / sum(mentions.values()))
        assert (row["config_version"], row["analyzer_version"]) == ("cfg1", "1.0.0")
    a, b, c = metrics["A"], metrics["B"], metrics["C"]
    assert a["avg_list_rank"] == pytest.approx(2.0) and b["avg_list_rank"] == pytest.approx(1.5)
    assert c["avg_list_rank"] is None
    assert (a["top1_rate"], a["top3_rate"]) == (pytest.approx(1 / 5), pytest.approx(2 / 5))
    assert (b["top1_rate"], b["top3_rate"]) == (pytest.approx(1 / 5), pytest.approx(2 / 5))
    assert (a["recommend_rate"], a["negative_rate"]) == (pytest.approx(2 / 5), pytest.approx(1 / 5))
    assert (c["recommend_rate"], c["negative_rate"]) == (0.0, pytest.approx(1 / 5))
    assert a["citation_rate"] == pytest.approx(1 / 3) and b["citation_rate"] == pytest.approx(2 / 2)
    assert a["own_domain_citation_rate"] == pytest.approx(1 / 3) and b["own_domain_citation_rate"] == 0.0
    with read_warehouse() as conn:
        invalid = dict(conn.execute("SELECT reason, answers FROM fct_invalid_answers").fetchall())
    assert invalid == {"valid": 5, "refusal": 1}


def test_rematerializing_a_metrics_partition_leaves_the_tables_identical(visibility_home):
    _write_partition()
    _write_partition("qwen")
    assert _materialize().success and _materialize("qwen").success
    with read_warehouse() as conn:
        before = conn.execute("SELECT * EXCLUDE (run_id) FROM fct_mention_metrics ORDER BY ALL").fetchall()
    assert _materialize().success
    with read_warehouse() as conn:
        after = conn.execute("SELECT * EXCLUDE (run_id) FROM fct_mention_metrics ORDER BY ALL").fetchall()
    assert after == before and len(after) == 6


def test_a_failing_yaml_test_is_a_failed_asset_check(visibility_home):
    broken = list(ANSWERS)
    broken[0] = (True, "refusal", True, ANSWERS[0][3])  # valid but with a reason: stg_samples' expression test
    _write_partition(answers=broken)
    result = _materialize()
    checks = {(e.asset_key.to_user_string(), e.check_name): e.passed for e in result.get_asset_check_evaluations()}
    assert checks[("stg_samples", "expression_3")] is False  # valid = (invalid_reason IS NULL)
    assert sum(not passed for passed in checks.values()) == 1


def _answers(mentioning_a: int, total: int = 10):
    return [(True, None, False, {"A": (True, None, True, False)} if i < mentioning_a else {}) for i in range(total)]


def _alerts():
    with read_warehouse() as conn:
        columns = "date, kind, subject, direction, rate, baseline_rate, z, p_value, q_value, tests_that_day, baseline_days"
        rows = conn.execute("SELECT " + columns + " FROM visibility_alerts ORDER BY ALL").fetchall()
    return [dict(zip([c.strip() for c in columns.split(",")], row)) for row in rows]


def test_a_jump_against_the_trailing_week_is_one_alert_whether_built_as_a_range_or_per_partition(visibility_home):
    """Brand A: 2 of 10 answers on each of four days, then 9 of 10."""
    days = [DAY - timedelta(days=offset) for offset in range(4, -1, -1)]
    for day in days:
        _write_partition(answers=_answers(9 if day == DAY else 2), day=day)
    assert _materialize_range(days[0], DAY).success
    alerts = _alerts()
    x1, n1, x0, n0 = 9, 10, 8, 40
    pooled = (x1 + x0) / (n1 + n0)
    z = (x1 / n1 - x0 / n0) / math.sqrt(pooled * (1 - pooled) * (1 / n1 + 1 / n0))
    p = math.erfc(abs(z) / math.sqrt(2))
    assert len(alerts) == 1, alerts
    alert = alerts[0]
    assert (alert["date"], alert["kind"], alert["subject"], alert["direction"]) == (DAY, "mention_rate", "A", "up")
    assert (alert["rate"], alert["baseline_rate"], alert["baseline_days"]) == (pytest.approx(0.9), pytest.approx(0.2), 4)
    assert alert["z"] == pytest.approx(z) and alert["p_value"] == pytest.approx(p, abs=2e-7)
    # Three tests that day (A, B, C; B and C have p = 1): Benjamini-Hochberg gives q = 3p for A.
    assert alert["tests_that_day"] == 3 and alert["q_value"] == pytest.approx(3 * p, abs=1e-6)

    for day in days:
        assert _materialize(day=day).success
    assert _alerts() == alerts


def test_a_range_run_created_with_subset_planned_events_plans_each_asset_once(visibility_home):
    """What `visibility backfill` does: one planned event per asset, one materialization per partition."""
    days = [DAY - timedelta(days=1), DAY]
    for day in days:
        _write_partition(day=day)
    with planned_events_as_subsets():
        result = _materialize_range(days[0], DAY)
    assert result.success and PLANNED_SUBSET_ENV not in os.environ
    planned = get_instance().all_logs(result.run_id, of_type=DagsterEventType.ASSET_MATERIALIZATION_PLANNED)
    assert len(planned) == len(MODELS)
    materialized = [e.asset_key.to_user_string() for e in result.get_asset_materialization_events()]
    assert materialized.count("int_brand_daily") == 2 and materialized.count("stg_samples") == 1


def test_an_incremental_model_may_take_date_and_platform_as_parameters(visibility_home, tmp_path):
    root = _copy_project(tmp_path)
    (root / "marts" / "fct_answers_per_day.sql").write_text(
        "-- kind: incremental\n-- grain: date, platform\n"
        "SELECT date, platform, count(*) AS answers, $run_id AS run_id FROM {{ ref('stg_samples') }}\n"
        "WHERE date = $date AND platform = $platform GROUP BY ALL\n")
    _write_partition()
    _write_partition("qwen")
    assets = build_sql_assets(EXAMPLE_PARTITIONS, load_project(root))
    assert _materialize(assets=assets).success and _materialize("qwen", assets=assets).success
    with read_warehouse() as conn:
        rows = conn.execute("SELECT platform, answers FROM fct_answers_per_day ORDER BY ALL").fetchall()
    assert rows == [("deepseek", 6), ("qwen", 6)]


def test_a_model_mixing_run_partitions_and_date_parameters_is_an_error_naming_the_file(tmp_path):
    root = _copy_project(tmp_path)
    (root / "marts" / "fct_mixed.sql").write_text(
        "-- kind: incremental\n-- grain: date, platform\nSELECT * FROM {{ ref('stg_samples') }}"
        " SEMI JOIN {{ run_partitions }} USING (date, platform) WHERE date = $date AND platform = $platform\n")
    with pytest.raises(ModelError, match=r"fct_mixed.sql: a model reading \{\{ run_partitions \}\} gets no \$date"):
        load_project(root)
    (root / "marts" / "fct_mixed.sql").write_text(
        "-- kind: view\n-- grain: date\nSELECT * FROM {{ ref('stg_samples') }} SEMI JOIN {{ run_partitions }} USING (date)\n")
    with pytest.raises(ModelError, match=r"fct_mixed.sql: only an incremental model can read"):
        load_project(root)


def _copy_project(tmp_path):
    target = tmp_path / "sql"
    shutil.copytree(PROJECT_DIR, target)
    return target


def test_a_broken_model_file_is_an_error_naming_the_file(tmp_path):
    root = _copy_project(tmp_path)
    (root / "marts" / "fct_broken.sql").write_text("-- kind: table\n-- grain: x\nSELECT * FROM {{ ref('nope') }}\n")
    with pytest.raises(ModelError, match=r"fct_broken.sql: ref\('nope'\) is neither a model nor a source"):
        load_project(root)
    (root / "marts" / "fct_broken.sql").write_text("SELECT 1\n")
    with pytest.raises(ModelError, match=r"fct_broken.sql: header must declare '-- kind"):
        load_project(root)


def test_a_ref_cycle_is_an_error_naming_the_files(tmp_path):
    root = _copy_project(tmp_path)
    (root / "marts" / "loop_a.sql").write_text("-- kind: view\n-- grain: x\nSELECT * FROM {{ ref('loop_b') }}\n")
    (root / "marts" / "loop_b.sql").write_text("-- kind: view\n-- grain: x\nSELECT * FROM {{ ref('loop_a') }}\n")
    with pytest.raises(ModelError, match=r"cycle: loop_a -> loop_b -> loop_a \(files: loop_a.sql, loop_b.sql\)"):
        load_project(root)


def test_adding_a_model_file_adds_an_asset_with_its_checks(tmp_path):
    root = _copy_project(tmp_path)
    (root / "marts" / "fct_top_brands.sql").write_text(
        "-- kind: table\n-- grain: brand\nSELECT brand, avg(mention_rate) AS rate FROM {{ ref('fct_mention_metrics') }}"
        " GROUP BY brand\n")
    (root / "marts" / "fct_top_brands.yml").write_text("tests:\n  - unique: [brand]\n")
    assets = {a.key.to_user_string(): a for a in build_sql_assets(EXAMPLE_PARTITIONS, load_project(root))}
    assert "fct_top_brands" in assets
    assert [k.name for k in assets["fct_top_brands"].check_keys] == ["unique_brand"]


def test_the_report_is_a_static_html_file_with_every_chart(visibility_home):
    from visibility_assets.report.defs import visibility_report

    _write_partition()
    assert _materialize().success
    result = materialize([visibility_report], instance=get_instance(), resources=resources())
    path = result.asset_materializations_for_node("visibility_report")[0].metadata["path"].value
    html = open(path, encoding="utf-8").read()
    assert html.startswith("<!DOCTYPE html>") and html.count("<svg") >= 4
    for section in ("Mention rate per platform", "Share of voice", "Trend", "Alerts", "Invalid answers", "Moderation"):
        assert section in html
    assert "<script" not in html and 'src="http' not in html and 'href="http' not in html  # no server, no network


def test_a_column_added_to_an_incremental_model_is_added_to_its_table(visibility_home, tmp_path):
    _write_partition()
    assert _materialize().success
    root = _copy_project(tmp_path)
    model = root / "marts" / "fct_invalid_answers.sql"
    model.write_text(model.read_text().replace("    $run_id AS run_id", "    $run_id AS run_id,\n    answers * 2 AS doubled"))
    assert _materialize(assets=build_sql_assets(EXAMPLE_PARTITIONS, load_project(root))).success
    with read_warehouse() as conn:
        assert conn.execute("SELECT sum(doubled) FROM fct_invalid_answers").fetchall()[0][0] == 12
