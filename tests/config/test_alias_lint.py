"""Aliases that would match too much are told, with brands.yaml's line: a common word of its
language, a single Chinese character, another category's brand; none in the shipped example.
`visibility aliases` adds how often each alias matched lately and which rules rejected it."""

import shutil
from datetime import timedelta

from tests.cli import visibility
from visibility_assets.config import EXAMPLE_CONFIG_DIR
from visibility_assets.config.alias_lint import alias_warnings
from visibility_assets.core.days import yesterday
from visibility_assets.warehouse.db import ensure_table, insert_batch
from visibility_assets.warehouse.lake import lake_settings, write_with_retry
from visibility_assets.warehouse.tables import ENTITY_MATCHES

XIAOMI = "aliases: [小米, Xiaomi, 小米手机, 红米, Redmi]"


def config_with(tmp_path, old: str, new: str):
    directory = tmp_path / "config"
    shutil.copytree(EXAMPLE_CONFIG_DIR, directory)
    path = directory / "brands.yaml"
    text = path.read_text(encoding="utf-8")
    assert old in text
    path.write_text(text.replace(old, new, 1), encoding="utf-8")
    line = text[:text.index(old)].count("\n") + 1
    return directory, line


def test_the_shipped_example_gives_no_warning():
    assert alias_warnings(EXAMPLE_CONFIG_DIR) == []


def test_a_common_word_a_single_han_character_and_another_categorys_brand_are_told_with_their_line(tmp_path):
    directory, line = config_with(tmp_path, XIAOMI, "aliases: [小米, Xiaomi, the, 云, 阿里云]")
    said = {warning.alias: str(warning) for warning in alias_warnings(directory)}
    assert set(said) == {"the", "云", "阿里云"}
    assert said["the"].startswith(f"brands.yaml line {line}: brand '小米': the alias 'the' is one of the commonest"
                                  " words of English")
    assert "single Chinese character" in said["云"]
    assert "names a brand of the category cloud too" in said["阿里云"]


def test_a_command_loading_the_config_warns_and_goes_on(tmp_path, monkeypatch):
    directory, line = config_with(tmp_path, XIAOMI, "aliases: [小米, Xiaomi, the]")
    monkeypatch.setenv("VISIBILITY_HOME", str(tmp_path / "home"))
    result = visibility("--config-dir", str(directory), "demo", "--date", "2019-01-01")  # stops at the date
    assert f"visibility demo: warning: brands.yaml line {line}: brand '小米': the alias 'the'" in result.stderr
    assert result.returncode == 2 and "the days that can be collected" in result.stderr


def test_aliases_counts_each_aliass_recent_matches_and_the_rules_that_rejected_them(visibility_home):
    day = yesterday()
    rows = [("k1", day, "kimi", "小米", "phone", "小米", 0, 2, "小米", True, None, "", None, []),
            ("k1", day, "kimi", "小米", "phone", "小米", 5, 7, "小米", False, "exclude_context", "", None, []),
            ("k2", day - timedelta(days=1), "qwen", "小米", "phone", "小米", 0, 2, "小米", False, "food_context", "",
             None, []),
            ("k3", day - timedelta(days=30), "qwen", "华为", "phone", "华为", 0, 2, "华为", True, None, "", None, [])]

    def write(conn):
        ensure_table(conn, ENTITY_MATCHES)
        insert_batch(conn, ENTITY_MATCHES, ENTITY_MATCHES.batch(rows))

    write_with_retry(lake_settings(), write)
    result = visibility("aliases", "--days", "7")
    assert result.returncode == 0, result.stderr
    assert "0 alias warnings" in result.stdout
    line = next(line for line in result.stdout.splitlines() if line.startswith("phone"))
    assert [cell.strip() for cell in line.split("|")] == ["phone", "小米", "小米", "3", "1", "2", "2",
                                                          "exclude_context, food_context"]
    assert "华为" not in result.stdout.split("matches of each alias")[1]  # 30 days ago: outside the 7
