"""Sentiment shares are headline figures only where the labels behind them are measured right at
least 70% of the time (review/ledger.py); elsewhere the workspace greys them and says why."""

from visibility_assets.review.ledger import sentiment_headline


def entry(source: str, basis: str, accuracy: float | None) -> dict:
    return {"source": source, "basis": basis, "accuracy": accuracy}


def test_a_source_measured_under_the_bar_holds_the_shares_down():
    verdict = sentiment_headline([entry("analyzer", "shipped", 0.679)], {"analyzer"}, {})
    assert verdict == {"headline": False, "reason": "analyzer: 68% right, under the 70% a headline figure needs"}


def test_random_reviews_measuring_it_high_enough_make_it_a_headline():
    assert sentiment_headline([entry("analyzer", "reviews", 0.82)], {"analyzer"}, {})["headline"]


def test_a_judge_counts_by_its_reviews_else_by_its_calibration_and_unmeasured_is_held_down():
    entries = [entry("analyzer", "reviews", 0.8), entry("judge", "none", None)]
    assert sentiment_headline(entries, {"judge", "analyzer"}, {"judge": 0.74})["headline"]
    held = sentiment_headline(entries, {"judge", "analyzer"}, {})
    assert held == {"headline": False, "reason": "judge: its accuracy is not measured yet"}


def test_reviewers_labels_need_no_measure():
    assert sentiment_headline([], {"review"}, {})["headline"]
