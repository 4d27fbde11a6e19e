"""The random queue is a random sample of the labels shown, and the ledger is computed from it
alone: over a simulated month of labels, the items dealt one after another have the
population's label distribution within sampling error; doubtful-first reviews never move it."""

import math
import random
from datetime import date, timedelta

import duckdb
import pytest

from visibility_assets.measure.project import load_project
from visibility_assets.measure.runner import create_macros
from visibility_assets.review.ledger import accuracy
from visibility_assets.review.queue import next_item
from visibility_assets.review.store import DOUBTFUL, RANDOM, MachineLabels, ReviewStore

FIRST = date(2026, 10, 1)
DAYS, PLATFORMS, ANSWERS_PER_DAY = 30, ("deepseek", "kimi", "qwen"), 60
DEALT = 400


@pytest.fixture(scope="module")
def month() -> duckdb.DuckDBPyConnection:
    """A month of one brand's labels on three platforms: named in 40% of the answers, more on
    kimi and later in the month (so a sample that favoured a platform or a week would show it)."""
    rng = random.Random(7)
    rows = []
    for day in range(DAYS):
        for platform in PLATFORMS:
            for answer in range(ANSWERS_PER_DAY):
                named = rng.random() < 0.25 + 0.2 * (platform == "kimi") + 0.15 * day / DAYS
                tone = rng.choices(["positive", "neutral", "negative"], [5, 3, 2])[0] if named else None
                rows.append((f"{platform}-{day:02d}-{answer:03d}", FIRST + timedelta(days=day), platform, "cloud",
                             "腾讯云", True, named, tone))
    conn = duckdb.connect()
    conn.execute("CREATE TABLE int_brand_results (request_key VARCHAR, date DATE, platform VARCHAR, category VARCHAR,"
                 " brand VARCHAR, valid BOOLEAN, mentioned BOOLEAN, sentiment VARCHAR)")
    conn.executemany("INSERT INTO int_brand_results VALUES (?, ?, ?, ?, ?, ?, ?, ?)", rows)
    return conn


def _deal(conn, count: int) -> list[str]:
    done: list[str] = []
    for _ in range(count):
        dealt = next_item(conn, RANDOM, "腾讯云", FIRST, FIRST + timedelta(days=DAYS - 1), [], done)
        done.append(dealt.request_key)
    return done


def test_the_items_dealt_have_the_populations_labels_within_sampling_error(month):
    dealt = _deal(month, DEALT)
    assert len(set(dealt)) == DEALT  # never the same item twice
    sample = month.execute("SELECT mentioned, sentiment, platform, date FROM int_brand_results"
                           " WHERE list_contains($keys, request_key)", {"keys": dealt}).fetchall()
    population = month.execute("SELECT mentioned, sentiment, platform, date FROM int_brand_results").fetchall()

    def shares(rows, key):
        counts: dict = {}
        for row in rows:
            counts[key(row)] = counts.get(key(row), 0) + 1
        return {k: v / len(rows) for k, v in counts.items()}

    for key in (lambda r: r[0], lambda r: r[1], lambda r: r[2], lambda r: (r[3] - FIRST).days // 7):
        expected, observed = shares(population, key), shares(sample, key)
        # A chi-square test of the sample's counts against the population's shares, at p = 0.001.
        chi2 = sum((observed.get(k, 0) * DEALT - p * DEALT) ** 2 / (p * DEALT) for k, p in expected.items())
        assert chi2 < _chi2_critical(len(expected) - 1), (expected, observed)


def _chi2_critical(freedom: int) -> float:
    """The chi-square quantile at 0.999 (Wilson-Hilferty), for a test that fails 1 time in 1,000 by chance."""
    z = 3.090232
    return freedom * (1 - 2 / (9 * freedom) + z * math.sqrt(2 / (9 * freedom))) ** 3


def test_the_order_is_the_same_for_every_reviewer_and_does_not_follow_the_keys(month):
    first = _deal(month, 30)
    assert _deal(month, 30) == first
    assert first != sorted(first)


def test_doubtful_first_reviews_never_enter_the_estimate(month, tmp_path):
    store = ReviewStore(tmp_path / "reviews.sqlite")
    with duckdb.connect() as conn:
        create_macros(conn, load_project())
        for index, key in enumerate(_deal(month, 40)):
            machine = _labels(key, mentioned=True, sentiment="positive")
            queue = RANDOM if index < 30 else DOUBTFUL
            store.deal("rita", key, "腾讯云", queue)
            # The random items confirmed, the doubtful ones all corrected.
            store.record("rita", queue, machine, {**machine.values, "sentiment": "positive" if queue == RANDOM
                                                  else "negative"})
        ledger = accuracy(conn, store.reviews("腾讯云"))
    sentiment = next(f for f in ledger["fields"] if f["field"] == "sentiment" and f["source"] == "analyzer")
    assert (sentiment["reviewed"], sentiment["confirmed"], sentiment["accuracy"]) == (30, 30, 1.0)
    assert sentiment["basis"] == "reviews" and "on 30 of your reviewed mentions" in sentiment["sentence"]


def _labels(key: str, mentioned: bool, sentiment: str | None) -> MachineLabels:
    return MachineLabels(key, "腾讯云", "2026-10-01", key.split("-")[0], "cloud", "zh-Hans", "1.5.0", None,
                         {"mentioned": mentioned, "mention_count": 1, "list_rank": None, "recommended": True,
                          "sentiment": sentiment},
                         {"mentioned": "analyzer", "mention_count": "analyzer", "list_rank": "analyzer",
                          "recommended": "analyzer", "sentiment": "analyzer"})


def test_an_item_reviewed_as_doubtful_is_still_dealt_by_the_random_queue(tmp_path):
    """Else the doubtful items a reviewer corrected would be missing from their random sample."""
    store = ReviewStore(tmp_path / "reviews.sqlite")
    machine = _labels("kimi-00-001", mentioned=True, sentiment="positive")
    store.deal("rita", machine.request_key, "腾讯云", DOUBTFUL)
    store.record("rita", DOUBTFUL, machine, {**machine.values, "sentiment": "negative"})
    assert store.reviewed_keys("rita", "腾讯云", DOUBTFUL) == ["kimi-00-001"]
    assert store.reviewed_keys("rita", "腾讯云", RANDOM) == []
    store.deal("rita", machine.request_key, "腾讯云", RANDOM)
    store.record("rita", RANDOM, machine, machine.values)  # dealt again at random: this review replaces the first
    (review,) = store.reviews("腾讯云")
    assert review.queue == RANDOM and review.labels["sentiment"][2] == "confirmed"
