"""Several partitions in one collection run: platforms side by side, each platform's days in turn."""


import httpx
import pytest

from visibility_assets.collect.collector import CollectionSettings, collect_partitions
from visibility_assets.config import load_config
from visibility_assets.core.partitions import Partition
from visibility_assets.warehouse.lake import LakeSettings, reading

pytestmark = pytest.mark.loopback


@pytest.mark.slow  # over a second by design
def test_two_platforms_and_two_days_each_collected_once_into_their_own_journals(loopback_config_dir, simulator, tmp_path):
    lake = LakeSettings.from_env(tmp_path)
    config = load_config()
    partitions = [Partition.of(f"{day}|{platform}") for day in ("2026-11-01", "2026-11-02") for platform in ("kimi", "qwen")]
    outcomes = collect_partitions(config, partitions, "run-1", lake, CollectionSettings())
    assert [(o.date, o.platform) for o in outcomes] == [("2026-11-01", "kimi"), ("2026-11-02", "kimi"),
                                                        ("2026-11-01", "qwen"), ("2026-11-02", "qwen")]
    per_partition = len(config.questions) * config.platform("kimi").rounds
    assert all(o.error is None and o.report.succeeded == per_partition for o in outcomes)
    with reading(lake) as conn:
        journaled = conn.execute("SELECT CAST(date AS VARCHAR), platform, count(*) FROM journal_answers"
                                 " GROUP BY ALL ORDER BY ALL").fetchall()
    assert journaled == sorted((p.day, p.platform, per_partition) for p in partitions)
    stats = httpx.get(f"{simulator.url}/_stats").json()
    assert stats["kimi"]["duplicates"] == stats["qwen"]["duplicates"] == 0
    assert stats["kimi"]["received"] == stats["qwen"]["received"] == 2 * per_partition


@pytest.mark.slow  # over a second by design
def test_a_platform_without_its_key_is_not_asked_for_any_day_and_the_others_run_on(
        loopback_config_dir, simulator, tmp_path, monkeypatch):
    from tests.conftest import write_config

    monkeypatch.delenv("SIM_ABSENT_KEY", raising=False)
    directory = write_config(tmp_path / "keyed", simulator.port)
    text = (directory / "platforms.yaml").read_text(encoding="utf-8")
    (directory / "platforms.yaml").write_text(
        text.replace("name: qwen\n", "name: qwen\n  api_key_env: SIM_ABSENT_KEY\n", 1), encoding="utf-8")
    config = load_config(directory)
    assert config.platform("qwen").api_key_env == "SIM_ABSENT_KEY"
    outcomes = collect_partitions(config, [Partition.of(f"{d}|{p}") for d in ("2026-11-01", "2026-11-02") for p in ("kimi", "qwen")],
                                  "run-1", LakeSettings.from_env(tmp_path), CollectionSettings())
    by_platform = {(o.date, o.platform): o for o in outcomes}
    assert all("SIM_ABSENT_KEY" in str(by_platform[(d, "qwen")].error) for d in ("2026-11-01", "2026-11-02"))
    assert all(by_platform[(d, "kimi")].error is None for d in ("2026-11-01", "2026-11-02"))
    assert "qwen" not in httpx.get(f"{simulator.url}/_stats").json()
