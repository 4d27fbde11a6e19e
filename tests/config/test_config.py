"""The config loader: the shipped example is valid; every error names file, line and entry."""

import re
import subprocess
import sys
from datetime import date

import pytest
import yaml

from visibility_assets.config import EXAMPLE_CONFIG_DIR, ConfigError, load_catalog, load_config
from visibility_assets.config.defs import visibility_config_files
from visibility_assets.config.loading import CONFIG_FILES, config_version
from visibility_assets.config.resource import VisibilityConfigResource
from visibility_assets.config.strict_yaml import DuplicateKey

from tests.conftest import write_config


def test_shipped_example_is_rich_enough():
    config = load_config(EXAMPLE_CONFIG_DIR)
    assert len(config.catalog.categories) >= 4
    assert len(config.brands) >= 20
    assert len(config.questions) >= 40
    assert [p.name for p in config.platforms] == ["deepseek", "qwen", "ernie", "hunyuan", "doubao", "kimi"]
    texts = [q.text for q in config.questions]
    assert any(any("\u4e00" <= c <= "\u9fff" for c in t) for t in texts)
    assert any(t.isascii() for t in texts)
    aliases = {a for b in config.brands for a in b.aliases}
    assert {"苹果", "小米", "华为", "华为云"} <= aliases


def test_the_catalog_version_changes_with_what_the_analyzer_reads_and_not_with_own_or_comments(tmp_path):
    directory = write_config(tmp_path / "c", 8787)
    before = load_config(directory)
    path = directory / "brands.yaml"
    text = path.read_text(encoding="utf-8")
    assert before.brands[0].own and not before.brands[1].own  # the example marks its first brand ours
    second = before.brands[1].name
    marked = text.replace(f"- name: {second}\n", f"- name: {second}\n    own: true\n", 1) + "\n# a comment\n"
    path.write_text(marked, encoding="utf-8")
    after = load_config(directory)
    assert after.brands[1].own
    assert after.catalog.version == before.catalog.version  # nothing to analyse again
    assert after.version != before.version  # the config's data version still moves
    path.write_text(marked.replace("aliases: [", "aliases: [Another Alias, ", 1), encoding="utf-8")
    assert load_config(directory).catalog.version != before.catalog.version


# A file of each kind, valid, for a folder that lacks it (the example ships no events.yaml or domains.yaml).
VALID_CONTENT = {
    "prices.yaml": "prices: []\n",
    "events.yaml": "events:\n  merge_window_minutes: 30\n",
    "canaries.yaml": "canaries:\n  - {id: c1, text: Describe yourself in one sentence.}\n",
    "domains.yaml": "domains:\n  - {domain: example.org, class: news}\n",
    "judge.yaml": "judge:\n  platform: deepseek\n",
    "retention.yaml": "retention:\n  raw_answers_days: 365\n",
}


@pytest.mark.parametrize("file", CONFIG_FILES)
def test_a_change_to_any_config_file_changes_the_config_version(tmp_path, file):
    directory = write_config(tmp_path / "c", 8787)
    first = load_config(directory)
    path = directory / file
    if path.exists():
        path.write_text(path.read_text(encoding="utf-8") + "\n# a comment\n", encoding="utf-8")
    else:
        path.write_text(VALID_CONTENT[file], encoding="utf-8")
    changed = load_config(directory)
    assert changed.version != first.version
    assert changed.version == config_version(directory) and len(changed.version) == 16
    resources = {"visibility_config": VisibilityConfigResource(config_dir=str(directory))}
    observed = visibility_config_files.observe_fn(**resources)
    assert observed.value == changed.version


def test_an_unchanged_folder_is_not_parsed_again_and_a_changed_one_is(tmp_path):
    directory = write_config(tmp_path / "c", 8787)
    first = load_config(directory)
    assert load_config(directory) is first
    _edit(directory, "questions.yaml", lambda d: d["questions"].pop())
    second = load_config(directory)
    assert second is not first and len(second.questions) == len(first.questions) - 1
    _edit(directory, "questions.yaml", lambda d: d["questions"][0].update(colour="red"))
    with pytest.raises(ConfigError, match="unknown key 'colour'"):
        load_config(directory)  # an invalid change is an error, not the config cached before it


def _edit(directory, file, mutate):
    path = directory / file
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    mutate(data)
    path.write_text(yaml.safe_dump(data, allow_unicode=True), encoding="utf-8")


@pytest.mark.parametrize(
    ("file", "mutate", "expected"),
    [
        ("brands.yaml", lambda d: d["brands"][1].update(alias=["x"]), "unknown key 'alias'"),
        ("brands.yaml", lambda d: d["brands"][1].update(aliases=[]), "aliases must not be empty"),
        ("brands.yaml", lambda d: d["brands"][1].update(aliases=["腾讯云", "  "]), "empty alias"),
        ("brands.yaml", lambda d: d["brands"][1].update(aliases=["腾讯云", "Tencent\nCloud"]), "spans lines"),
        ("brands.yaml", lambda d: d["brands"][1].update(aliases=["ALIYUN"]), "alias 'ALIYUN' is already claimed by brand '阿里云'"),
        ("brands.yaml", lambda d: d["brands"][1].update(name="阿里云"), "duplicate brand name in its category '阿里云'"),
        ("questions.yaml", lambda d: d["questions"][1].update(id="q001"), "duplicate question id 'q001'"),
        ("questions.yaml", lambda d: d["questions"][2].update(category="toys"), "unknown category 'toys'"),
        ("questions.yaml", lambda d: d["questions"][0].pop("text"), "missing key 'text'"),
        ("platforms.yaml", lambda d: d["platforms"][1].update(name="deepseek"), "duplicate platform name 'deepseek'"),
        ("platforms.yaml", lambda d: d["platforms"][0].update(rounds=0), "'rounds'"),
        ("platforms.yaml", lambda d: d["platforms"][0].update(name="Deep Seek"), "'name'"),
        ("platforms.yaml", lambda d: d["platforms"][0].update(dialect="bard"), "'dialect'"),
        ("platforms.yaml", lambda d: d["platforms"][0].update(web_search="yes"), "'web_search'"),
        ("platforms.yaml", lambda d: d["platforms"][0].update(thinking="on"), "'thinking'"),
        ("platforms.yaml", lambda d: d["platforms"][0].update(max_cost_per_day=0), "'max_cost_per_day'"),
        ("prices.yaml", lambda d: d["prices"][0].update(platform="bard"), "price for unknown platform 'bard'"),
        ("prices.yaml", lambda d: d["prices"][0].update(currency="yuan"), "'currency'"),
        ("prices.yaml", lambda d: d["prices"][1].update(effective_from=d["prices"][0]["effective_from"],
                                                        model=d["prices"][0]["model"],
                                                        platform=d["prices"][0]["platform"]), "duplicate price start"),
        ("prices.yaml", lambda d: d["prices"][0].update(windows=[{"start": "00:30", "end": "08:30",
                                                                  "timezone": "Mars/Olympus", "multiplier": 0.5}]),
         "Mars/Olympus"),
    ],
)
def test_each_config_error_names_file_line_and_entry(tmp_path, file, mutate, expected):
    directory = write_config(tmp_path / "c", 8787)
    _edit(directory, file, mutate)
    with pytest.raises(ConfigError) as raised:
        load_config(directory)
    message = str(raised.value)
    assert expected in message
    assert f"{file} line " in message


def test_invalid_yaml_names_the_line(tmp_path):
    directory = write_config(tmp_path / "c", 8787)
    (directory / "questions.yaml").write_text("questions:\n  - id: q1\n    text: [unclosed\n", encoding="utf-8")
    with pytest.raises(ConfigError, match=r"questions.yaml line \d+: not valid YAML"):
        load_config(directory)


def test_catalog_alone_loads_for_analyze():
    catalog = load_catalog(EXAMPLE_CONFIG_DIR / "brands.yaml")
    assert catalog.for_category("cloud")


@pytest.mark.system
def test_cli_reports_config_errors_without_traceback_and_writes_nothing(tmp_path):
    directory = write_config(tmp_path / "c", 8787)
    _edit(directory, "brands.yaml", lambda d: d["brands"][0].update(colour="red"))
    home = tmp_path / "home"
    result = subprocess.run(
        [sys.executable, "-m", "visibility_assets.cli", "--config-dir", str(directory), "demo"],
        capture_output=True, text=True, env={"VISIBILITY_HOME": str(home), "PATH": "/usr/bin:/bin"},
    )
    assert result.returncode == 2
    assert re.search(r"brands.yaml line 8: brands\[0\] \(阿里云\): unknown key 'colour'", result.stderr)
    assert "Traceback" not in result.stderr
    assert not home.exists()


def test_libyaml_and_the_python_parser_read_every_shipped_yaml_the_same(tmp_path):
    """Config and model YAML go through libyaml's parser where PyYAML has it; the scalars
    still resolve by the YAML 1.2 rules (`yes` and `22:00` stay strings) and mappings refuse
    duplicate keys, as the Python parser reads them."""
    from visibility_assets.config.strict_yaml import StrictLoader, _compose_and_load, _FastStrictLoader, safe_load
    from visibility_assets.measure.project import PROJECT_DIR

    assert _FastStrictLoader.__mro__[2] is yaml.CSafeLoader  # the test means something only with libyaml
    tricky = "rounds: yes\nat: 22:00\nsize: 1e3\nday: 2026-01-01\nempty:\nflag: true\n"
    assert _compose_and_load(_FastStrictLoader, tricky)[1] == _compose_and_load(StrictLoader, tricky)[1] == {
        "rounds": "yes", "at": "22:00", "size": 1000.0, "day": date(2026, 1, 1), "empty": None, "flag": True}
    for path in sorted(EXAMPLE_CONFIG_DIR.glob("*.yaml")):
        text = path.read_text(encoding="utf-8")
        assert _compose_and_load(_FastStrictLoader, text)[1] == _compose_and_load(StrictLoader, text)[1], path
    for path in sorted(PROJECT_DIR.rglob("*.yml")) + sorted(PROJECT_DIR.rglob("*.yaml")):
        text = path.read_text(encoding="utf-8")
        assert safe_load(text) == yaml.safe_load(text), path
    with pytest.raises(DuplicateKey):
        _compose_and_load(_FastStrictLoader, "a: 1\nb: 2\na: 3\n")
