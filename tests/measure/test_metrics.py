"""The SQL models as Dagster assets: YAML tests as asset checks, range runs planned as subsets,
a new incremental model filling its history, a column added to an incremental model, the report; and the
project's loading errors. The models' logic is tested in milliseconds in test_sql_models.py."""

import os
from datetime import date, timedelta

import pytest
from dagster import AssetKey, DagsterEventType, materialize

from tests.pipeline import read_warehouse, resources
from tests.sql_models_harness import copy_project
from visibility_assets.config import EXAMPLE_CONFIG_DIR, load_config
from visibility_assets.core.partitions import daily_platform_partitions, partition_key
from visibility_assets.measure.change_rule import change_rule
from visibility_assets.measure.defs import build_sql_assets
from visibility_assets.measure.project import ModelError, load_project
from visibility_assets.operate.automation import RANGE_END, RANGE_START
from visibility_assets.operate.instance import PLANNED_SUBSET_ENV, get_instance, planned_events_as_subsets
from visibility_assets.warehouse.tables import TABLES

DAY = date(2026, 11, 10)
EXAMPLE_PARTITIONS = daily_platform_partitions(load_config(EXAMPLE_CONFIG_DIR).platform_names)
MODELS = build_sql_assets(EXAMPLE_PARTITIONS)

# (valid, invalid_reason, has_citation, {brand: (mentioned, list_rank, recommended, cites_own_domain)})
ANSWERS = [
    (True, None, True, {"A": (True, 1, True, True), "B": (True, 2, True, False)}),
    (True, None, False, {"A": (True, 3, True, False)}),
    (True, None, True, {"B": (True, 1, True, False), "C": (True, None, False, False)}),
    (True, None, False, {"A": (True, None, False, False)}),
    (True, None, False, {}),
    (False, "refusal", False, {}),
]


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


def _only(*names: str) -> list[AssetKey]:
    """A selection of the models a test needs (the others' runs would only cost time)."""
    return [AssetKey(name) for name in names]


def _materialize(platform="deepseek", assets=MODELS, day=DAY, selection=None):
    return materialize(assets, selection=selection, partition_key=partition_key(day.isoformat(), platform),
                       instance=get_instance(), resources=resources(), raise_on_error=False)


def _materialize_range(first: date, last: date, platform="deepseek", selection=None):
    """One run over the partition range, as a single-run backfill makes it."""
    tags = {RANGE_START: partition_key(first.isoformat(), platform), RANGE_END: partition_key(last.isoformat(), platform)}
    return materialize(MODELS, selection=selection, tags=tags, instance=get_instance(), resources=resources(),
                       raise_on_error=False)


@pytest.mark.dagster
def test_a_failing_yaml_test_is_a_failed_asset_check(visibility_home):
    """Which checks the broken row fails, over every model, is test_sql_models'
    test_a_valid_answer_with_an_invalid_reason_breaks_only_stg_samples_expression_test."""
    broken = list(ANSWERS)
    broken[0] = (True, "refusal", True, ANSWERS[0][3])  # valid but with a reason: stg_samples' expression test
    _write_partition(answers=broken)
    result = materialize(MODELS, selection=_only("stg_samples"), instance=get_instance(), resources=resources(),
                         raise_on_error=False)  # a view: no partition
    checks = {(e.asset_key.to_user_string(), e.check_name): e.passed for e in result.get_asset_check_evaluations()}
    assert checks[("stg_samples", "expression_3")] is False  # valid = (invalid_reason IS NULL)
    assert sum(not passed for passed in checks.values()) == 1
    assert len(checks) == len(load_project().models["stg_samples"].tests)  # only the view's checks ran


@pytest.mark.dagster
def test_a_range_run_created_with_subset_planned_events_plans_each_asset_once(visibility_home):
    """What `visibility backfill` does: one planned event per asset, one materialization per partition."""
    days = [DAY - timedelta(days=1), DAY]
    for day in days:
        _write_partition(day=day)
    selection = _only("stg_samples", "stg_brand_results", "int_brand_daily")  # views and an incremental model
    with planned_events_as_subsets():
        result = _materialize_range(days[0], DAY, selection=selection)
    assert result.success and PLANNED_SUBSET_ENV not in os.environ
    planned = get_instance().all_logs(result.run_id, of_type=DagsterEventType.ASSET_MATERIALIZATION_PLANNED)
    assert len(planned) == len(selection)
    materialized = [e.asset_key.to_user_string() for e in result.get_asset_materialization_events()]
    assert materialized.count("int_brand_daily") == 2 and materialized.count("stg_samples") == 1


@pytest.mark.dagster
def test_an_incremental_model_added_to_a_warehouse_with_history_fills_it_on_its_first_build(visibility_home, tmp_path):
    root = copy_project(tmp_path)
    (root / "marts" / "fct_answers_per_day.sql").write_text(
        "-- kind: incremental\n-- grain: date, platform\n"
        "SELECT date, platform, count(*) AS answers FROM {{ ref('stg_samples') }}\n"
        "SEMI JOIN {{ run_partitions }} USING (date, platform) GROUP BY ALL\n")
    _write_partition()
    _write_partition("qwen")
    _write_partition(day=DAY - timedelta(days=1))
    assets = build_sql_assets(EXAMPLE_PARTITIONS, load_project(root))
    selection = _only("stg_samples", "fct_answers_per_day")
    assert _materialize("qwen", assets=assets, selection=selection).success  # the first build: all history
    _write_partition(day=DAY + timedelta(days=1))
    assert _materialize("qwen", assets=assets, selection=selection).success  # then the run's partitions only
    with read_warehouse() as conn:
        rows = conn.execute("SELECT date, platform, answers FROM fct_answers_per_day ORDER BY ALL").fetchall()
    assert rows == [(DAY - timedelta(days=1), "deepseek", 6), (DAY, "deepseek", 6), (DAY, "qwen", 6)]


def test_a_model_taking_its_partitions_other_than_from_run_partitions_is_an_error_naming_the_file(tmp_path):
    root = copy_project(tmp_path)
    (root / "marts" / "fct_per_day.sql").write_text(
        "-- kind: incremental\n-- grain: date, platform\nSELECT date, platform, count(*) AS answers"
        " FROM {{ ref('stg_samples') }} WHERE date = $date AND platform = $platform GROUP BY ALL\n")
    with pytest.raises(ModelError, match=r"fct_per_day.sql: an incremental model must select its partitions"
                                         r" through \{\{ run_partitions \}\}"):
        load_project(root)
    (root / "marts" / "fct_per_day.sql").write_text(
        "-- kind: incremental\n-- grain: date, platform\nSELECT * FROM {{ ref('stg_samples') }}"
        " SEMI JOIN {{ run_partitions }} USING (date, platform) WHERE date = $date\n")
    with pytest.raises(ModelError, match=r"fct_per_day.sql: a model gets no \$date or \$platform"):
        load_project(root)
    (root / "marts" / "fct_per_day.sql").write_text(
        "-- kind: view\n-- grain: date\nSELECT * FROM {{ ref('stg_samples') }} SEMI JOIN {{ run_partitions }} USING (date)\n")
    with pytest.raises(ModelError, match=r"fct_per_day.sql: only an incremental model can read"):
        load_project(root)


def test_a_broken_model_file_is_an_error_naming_the_file(tmp_path):
    root = copy_project(tmp_path)
    (root / "marts" / "fct_broken.sql").write_text("-- kind: table\n-- grain: x\nSELECT * FROM {{ ref('nope') }}\n")
    with pytest.raises(ModelError, match=r"fct_broken.sql: ref\('nope'\) is neither a model nor a source"):
        load_project(root)
    (root / "marts" / "fct_broken.sql").write_text("SELECT 1\n")
    with pytest.raises(ModelError, match=r"fct_broken.sql: header must declare '-- kind"):
        load_project(root)


def test_a_ref_cycle_is_an_error_naming_the_files(tmp_path):
    root = copy_project(tmp_path)
    (root / "marts" / "loop_a.sql").write_text("-- kind: view\n-- grain: x\nSELECT * FROM {{ ref('loop_b') }}\n")
    (root / "marts" / "loop_b.sql").write_text("-- kind: view\n-- grain: x\nSELECT * FROM {{ ref('loop_a') }}\n")
    with pytest.raises(ModelError, match=r"cycle: loop_a -> loop_b -> loop_a \(files: loop_a.sql, loop_b.sql\)"):
        load_project(root)


def test_adding_a_model_file_adds_an_asset_with_its_checks(tmp_path):
    root = copy_project(tmp_path)
    (root / "marts" / "fct_top_brands.sql").write_text(
        "-- kind: table\n-- grain: brand\nSELECT brand, avg(mention_rate) AS rate FROM {{ ref('fct_mention_metrics') }}"
        " GROUP BY brand\n")
    (root / "marts" / "fct_top_brands.yml").write_text("tests:\n  - unique: [brand]\n")
    assets = {k.to_user_string(): a for a in build_sql_assets(EXAMPLE_PARTITIONS, load_project(root)) for k in a.keys}
    assert "fct_top_brands" in assets
    assert [k.name for k in assets["fct_top_brands"].check_keys if k.asset_key.to_user_string() == "fct_top_brands"] \
        == ["unique_brand"]


@pytest.mark.dagster
def test_the_report_is_a_static_html_file_with_every_chart(visibility_home):
    from visibility_assets.report.defs import visibility_report

    _write_partition()
    assert _materialize().success
    result = materialize([visibility_report], instance=get_instance(), resources=resources())
    path = result.asset_materializations_for_node("visibility_report")[0].metadata["path"].value
    with open(path, encoding="utf-8") as file:
        html = file.read()
    assert html.startswith("<!DOCTYPE html>") and html.count("<svg") >= 4
    for section in ("Mention rate per platform", "Share of voice", "Trend", "Alerts", "Invalid answers", "Moderation"):
        assert section in html
    assert "<script" not in html and 'src="http' not in html and 'href="http' not in html  # no server, no network
    rule = change_rule()  # the alerts section states the rule the SQL applies
    assert f"against its {rule.baseline_days}-day baseline" in html and f"p &lt; {rule.kept_p:g}" in html
    from visibility_assets.review.shipped_accuracy import SENTIMENT_HELD_OUT
    # beside the sentiment figures: the method, and what its labels are worth
    assert "Method: the analyzer" in html and f"of {SENTIMENT_HELD_OUT.pairs} held-out hand-labelled" in html


@pytest.mark.dagster
def test_a_column_added_to_an_incremental_model_is_added_to_its_table(visibility_home, tmp_path):
    _write_partition()
    selection = _only("stg_samples", "fct_invalid_answers")
    assert _materialize(selection=selection).success
    root = copy_project(tmp_path)
    model = root / "marts" / "fct_invalid_answers.sql"
    model.write_text(model.read_text().replace("    $run_id AS run_id", "    $run_id AS run_id,\n    answers * 2 AS doubled"))
    assert _materialize(assets=build_sql_assets(EXAMPLE_PARTITIONS, load_project(root)), selection=selection).success
    with read_warehouse() as conn:
        assert conn.execute("SELECT sum(doubled) FROM fct_invalid_answers").fetchall()[0][0] == 12
