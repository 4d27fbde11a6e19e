"""cleaned_samples through real Dagster runs: exact replacement, no platform calls, quarantine.
Each run materializes the raw answers, the catalog and the cleaned samples: not the metrics."""

import pytest
from dagster import materialize

from tests.pipeline import partitions, raw_asset, read_warehouse, resources, write_warehouse
from visibility_assets.clean.analyzer import ANALYZER_VERSION
from visibility_assets.clean.defs import brand_catalog, build_cleaned_samples
from visibility_assets.config import load_config
from visibility_assets.core.partitions import partition_key, partition_tags
from visibility_assets.operate.instance import get_instance

pytestmark = pytest.mark.dagster

DAY = "2026-11-06"
STABLE_COLUMNS = ("SELECT request_key, valid, invalid_reason, brands_mentioned, citations, config_version"
                  " FROM cleaned_samples ORDER BY request_key")


def _rows(sql, params=()):
    with read_warehouse() as conn:
        return conn.execute(sql, params).fetchall()


def _collect_and_clean(platform="deepseek"):
    run = materialize([raw_asset(), brand_catalog, build_cleaned_samples(partitions())],
                      partition_key=partition_key(DAY, platform), instance=get_instance(), resources=resources(),
                      tags=partition_tags(DAY, platform))
    assert run.success
    return run


def _clean_again(platform="deepseek"):
    return materialize([build_cleaned_samples(partitions()), brand_catalog], selection=["cleaned_samples"],
                       partition_key=partition_key(DAY, platform), instance=get_instance(),
                       resources=resources(), raise_on_error=False)


def test_one_sample_per_raw_answer_with_brand_rows_matches_and_states(visibility_home, config_dir, simulated):
    _collect_and_clean()
    config = load_config()
    raw = _rows("SELECT count(*) FROM raw_ai_responses")[0][0]
    assert _rows("SELECT count(*), count(DISTINCT request_key) FROM cleaned_samples")[0] == (raw, raw)
    per_category = {c: len(config.catalog.for_category(c)) for c in config.catalog.categories}
    expected_brand_rows = sum(per_category[c] for (c,) in _rows("SELECT category FROM cleaned_samples"))
    assert _rows("SELECT count(*) FROM sample_brand_results")[0][0] == expected_brand_rows
    # Every accepted match is counted in the brand results, and rejections say why.
    accepted = _rows("SELECT count(*) FROM entity_matches m JOIN cleaned_samples s USING (request_key)"
                     " WHERE m.accepted AND m.brand_category = s.category")[0][0]
    assert accepted == _rows("SELECT sum(mention_count) FROM sample_brand_results")[0][0]
    assert all(rule != "accepted" for (rule,) in _rows("SELECT DISTINCT rule FROM entity_matches WHERE NOT accepted"))
    # Each sample went pending -> validating -> valid|invalid [-> extracting -> extracted] -> completed.
    paths = _rows("SELECT string_agg(state, '>' ORDER BY seq) FROM sample_state_history GROUP BY request_key")
    assert {p for (p,) in paths} <= {"pending>validating>valid>extracting>extracted>completed",
                                      "pending>validating>invalid>completed"}
    versions = _rows("SELECT DISTINCT analyzer_version, config_version FROM cleaned_samples")
    assert versions == [(ANALYZER_VERSION, config.catalog.version)]


def test_recleaning_replaces_rows_exactly_and_sends_no_request(visibility_home, config_dir, simulated):
    _collect_and_clean()
    before = _rows(STABLE_COLUMNS)
    matches_before = _rows("SELECT count(*) FROM entity_matches")
    received = simulated.app.stats_json()["deepseek"]["received"]
    result = _clean_again()
    assert result.success
    assert _rows(STABLE_COLUMNS) == before
    assert _rows("SELECT count(*) FROM entity_matches") == matches_before
    assert simulated.app.stats_json()["deepseek"]["received"] == received


def test_unanalysable_samples_are_quarantined_and_fail_the_partition_only_above_the_limit(
        visibility_home, config_dir, simulated):
    _collect_and_clean()
    total = _rows("SELECT count(*) FROM raw_ai_responses")[0][0]
    write_warehouse(lambda conn: conn.execute(  # a category that is no longer in the catalog
        "UPDATE raw_ai_responses SET category = 'retired' WHERE request_key IN"
                     " (SELECT request_key FROM raw_ai_responses ORDER BY request_key LIMIT 1)"))
    assert _clean_again().success
    assert _rows("SELECT count(*) FROM sample_quarantine")[0][0] == 1
    assert _rows("SELECT count(*) FROM cleaned_samples")[0][0] == total - 1
    write_warehouse(lambda conn: conn.execute(
        "UPDATE raw_ai_responses SET category = 'retired' WHERE request_key IN"
                     " (SELECT request_key FROM raw_ai_responses ORDER BY request_key LIMIT 5)"))
    failed = _clean_again()
    assert not failed.success
    assert "5 of" in failed.get_step_failure_events()[0].event_specific_data.error.message
    assert _rows("SELECT count(*) FROM sample_quarantine")[0][0] == 5


def test_brand_catalog_data_version_follows_brands_yaml(visibility_home, config_dir):
    first = materialize([brand_catalog], instance=get_instance(), resources=resources())
    version = first.asset_materializations_for_node("brand_catalog")[0].tags["dagster/data_version"]
    assert version == load_config().catalog.version
    path = config_dir / "brands.yaml"
    path.write_text(path.read_text(encoding="utf-8").replace("aliases: [阿里云", "aliases: [阿里云, 阿里云计算", 1),
                    encoding="utf-8")
    second = materialize([brand_catalog], instance=get_instance(), resources=resources())
    new_version = second.asset_materializations_for_node("brand_catalog")[0].tags["dagster/data_version"]
    assert new_version != version
    assert _rows("SELECT count(*) FROM brand_catalog_versions")[0][0] == 2
    assert _rows("SELECT DISTINCT config_version FROM brand_catalog") == [(new_version,)]
