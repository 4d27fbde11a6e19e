"""The metric catalog (dbt_like_sql/metrics.yml): each figure declared once, over columns that
mention_metrics holds, and read by the overview and the report."""

from __future__ import annotations

import shutil

import pytest

from tests.sql_models_harness import copy_project
from visibility_assets.measure.metric_catalog import metric_catalog
from visibility_assets.measure.project import PROJECT_DIR, ModelError, load_project
from visibility_assets.measure.period_figures import figures_sql


def test_every_figure_is_a_column_of_mention_metrics_and_every_share_pools_its_count_columns():
    columns = set(load_project().models["fct_mention_metrics"].columns)
    for metric in metric_catalog():
        assert metric.name in columns and metric.label, metric.name
        if metric.kind == "share":
            assert {metric.numerator, metric.denominator} <= columns, metric.name


def test_the_overview_computes_every_figure_of_the_catalog_and_no_other():
    sql = figures_sql()
    names = [m.name for m in metric_catalog()]
    assert len(names) >= 10 and all(f"'{name}' AS metric" in sql for name in names)
    assert sql.count("AS metric, ") == len(names)


@pytest.mark.parametrize("entry, message", [
    ("  - {name: x, label: X, kind: ratio}\n", r"metrics\[{n}\]: kind must be one of share, mean \(found 'ratio'\)"),
    ("  - {name: x, label: X, kind: share, numerator: \"a; DROP\", denominator: b}\n",
     r"metrics\[{n}\]: 'a; DROP' is not a column or metric name"),
    ("  - {name: mention_rate, label: X, kind: mean}\n", r"a metric name appears twice"),
])
def test_a_bad_catalog_entry_is_an_error_naming_the_file_and_entry(tmp_path, entry, message):
    shutil.copy(PROJECT_DIR / "metrics.yml", tmp_path / "metrics.yml")
    with open(tmp_path / "metrics.yml", "a", encoding="utf-8") as file:
        file.write(entry)
    message = message.replace("{n}", str(len(metric_catalog())))  # the entry added is the last
    with pytest.raises(ModelError, match=r"metrics.yml: " + message if "twice" not in message else message):
        metric_catalog(tmp_path)


def test_a_model_takes_each_rate_from_the_catalog_and_a_share_it_lacks_is_an_error_naming_the_file(tmp_path):
    compiled = load_project().models["fct_mention_metrics"].compiled()
    for metric in metric_catalog():
        if metric.kind == "share":  # the rate as the catalog defines it, nowhere else
            assert (f"CASE WHEN {metric.denominator} > 0 THEN {metric.numerator} / {metric.denominator} END"
                    f" AS {metric.name}") in compiled
    assert "wilson_low(mentioned_answers, valid_answers) AS mention_rate_low" in compiled

    root = copy_project(tmp_path)
    model = root / "marts" / "fct_variant_metrics.sql"
    model.write_text(model.read_text(encoding="utf-8").replace("{{ share('top1_rate') }}", "{{ share('top9_rate') }}"),
                     encoding="utf-8")
    with pytest.raises(ModelError, match=r"fct_variant_metrics.sql: \{\{ share\('top9_rate'\) \}\}: no share of"
                                         r" that name in .*metrics.yml \(mention_rate, "):
        load_project(root)
