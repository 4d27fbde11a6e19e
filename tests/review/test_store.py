from datetime import date

from visibility_assets.review.store import RANDOM, MachineLabels, ReviewStore

VALUES = {"mentioned": True, "mention_count": 1, "list_rank": 2, "recommended": True, "sentiment": "positive"}
SOURCES = {field: "analyzer" for field in VALUES}


def _reviewed(store: ReviewStore, reviewer: str, key: str, day: str, platform: str, values: dict | None) -> None:
    machine = MachineLabels(key, "腾讯云", day, platform, "cloud", "zh-Hans", "1.7.0", None, VALUES, SOURCES)
    store.deal(reviewer, key, "腾讯云", RANDOM)
    store.record(reviewer, RANDOM, machine, values)


def test_the_labels_a_cleaning_copies_are_the_latest_review_of_each_item_of_its_partitions_only(tmp_path):
    store = ReviewStore(tmp_path / "reviews.sqlite")
    _reviewed(store, "rita", "k1", "2026-10-01", "kimi", {**VALUES, "sentiment": "negative"})
    _reviewed(store, "sam", "k1", "2026-10-01", "kimi", {**VALUES, "sentiment": "neutral"})  # the later review wins
    _reviewed(store, "rita", "k2", "2026-10-01", "qwen", VALUES)  # another platform of the same day
    _reviewed(store, "rita", "k3", "2026-10-02", "kimi", VALUES)  # another day of the same platform
    _reviewed(store, "rita", "k4", "2026-10-01", "kimi", None)  # skipped: no labels to copy
    (row,) = store.effective([(date(2026, 10, 1), "kimi")])
    assert (row["request_key"], row["reviewer"], row["sentiment"], row["reviewers"]) == ("k1", "sam", "neutral", 2)
    assert row["date"] == date(2026, 10, 1) and row["platform"] == "kimi"
    both = store.effective([(date(2026, 10, 1), "kimi"), (date(2026, 10, 2), "kimi"), (date(2026, 10, 1), "kimi")])
    assert sorted(r["request_key"] for r in both) == ["k1", "k3"]
    assert store.effective([]) == []
    assert ReviewStore(tmp_path / "none.sqlite").effective([(date(2026, 10, 1), "kimi")]) == []

