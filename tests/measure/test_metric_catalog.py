"""The metric catalog (dbt_like_sql/metrics.yml): each figure declared once, over columns that
mention_metrics holds, and read by the overview and the report."""

from __future__ import annotations

import shutil

import pytest

from visibility_assets.measure.metric_catalog import metric_catalog
from visibility_assets.measure.project import PROJECT_DIR, ModelError, load_project
from visibility_assets.serve.views.overview import figures_sql


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
    ("  - {name: x, label: X, kind: ratio}\n", r"metrics\[10\]: kind must be one of share, mean \(found 'ratio'\)"),
    ("  - {name: x, label: X, kind: share, numerator: \"a; DROP\", denominator: b}\n",
     r"metrics\[10\]: 'a; DROP' is not a column or metric name"),
    ("  - {name: mention_rate, label: X, kind: mean}\n", r"a metric name appears twice"),
])
def test_a_bad_catalog_entry_is_an_error_naming_the_file_and_entry(tmp_path, entry, message):
    shutil.copy(PROJECT_DIR / "metrics.yml", tmp_path / "metrics.yml")
    with open(tmp_path / "metrics.yml", "a", encoding="utf-8") as file:
        file.write(entry)
    with pytest.raises(ModelError, match=r"metrics.yml: " + message if "twice" not in message else message):
        metric_catalog(tmp_path)
