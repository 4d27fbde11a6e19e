"""The history filler of `bench history` and `bench serve`: nights written by worker processes,
which it replaces every so many nights (a writer process grew by gigabytes over a year)."""

from datetime import date

import pytest

from visibility_assets.config import load_config
from visibility_assets.tools.bench.history import history_config
from visibility_assets.tools.bench.history_nights import HistoryWriter

pytestmark = pytest.mark.slow


def test_every_night_is_written_in_full_when_the_workers_are_replaced_between_nights(visibility_home, monkeypatch):
    config_dir = history_config(visibility_home / "config", questions=2)
    monkeypatch.setenv("VISIBILITY_CONFIG_DIR", str(config_dir))
    config = load_config(config_dir)
    with HistoryWriter(config, processes=1, nights_per_workers=1) as writer:
        first = writer.night(date(2026, 10, 1))
        workers = writer.pool
        second = writer.night(date(2026, 10, 2))
        assert writer.pool is not workers
    for night, day in ((first, "2026-10-01"), (second, "2026-10-02")):
        assert sorted(w.platform for w in night) == sorted(config.platform_names)
        assert all(w.date == day and w.answers > 0 and not w.failed_checks for w in night)
