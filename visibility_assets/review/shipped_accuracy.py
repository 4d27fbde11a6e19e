"""What the analyzer's sentiment labels are worth: their accuracy on the held-out half of the
hand-labelled pairs (tests/eval/sentiment.jsonl and sentiment_corpus/), measured for this analyzer
version beside the lexicon's on the same pairs.

The report and the workspace print it beside every sentiment figure the analyzer produced, so no
one reads a label that is right seven times in ten as a fact. tests/clean/test_sentiment_eval.py
measures it again and fails when the figure or the analyzer version here is stale.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class MeasuredAccuracy:
    analyzer_version: str
    pairs: int  # brand-answer pairs of the held-out half
    accuracy: float
    macro_f1: float
    majority_accuracy: float  # always answering the half's most frequent label
    lexicon_accuracy: float  # the hand lexicon alone, on the same pairs

    def sentence(self) -> str:
        return (f"the analyzer's sentiment (a learned model, analyzer {self.analyzer_version}) was right on"
                f" {self.accuracy:.1%} of {self.pairs} held-out hand-labelled brand-answer pairs (macro-F1"
                f" {self.macro_f1:.3f}; the hand lexicon alone: {self.lexicon_accuracy:.1%}; always guessing the"
                f" commonest label: {self.majority_accuracy:.0%})")


SENTIMENT_HELD_OUT = MeasuredAccuracy(analyzer_version="1.8.0", pairs=1518, accuracy=0.748, macro_f1=0.748,
                                      majority_accuracy=0.375, lexicon_accuracy=0.594)


@dataclass(frozen=True)
class ShippedFigure:
    """A label's accuracy on a labelled set shipped with the analyzer: what the workspace shows
    for a field until a deployment's own random reviews of it are enough (review/ledger.py)."""

    field: str
    source: str  # who sets the label: the analyzer
    accuracy: float
    items: int
    labelled_set: str

    def sentence(self) -> str:
        return (f"{self.source}: {self.accuracy:.1%} right on {self.items} {self.labelled_set}"
                f" (analyzer {ANALYZER_SET_VERSION}; not your answers)")


# tests/eval's analysis set, every (answer, brand of its category) entry; tests/clean/test_analyzer_eval.py
# measures them again and fails when they are stale.
ANALYZER_SET_VERSION = "1.8.0"
ANALYSIS_SET = "brand-answer pairs of the shipped labelled set"
SHIPPED_FIGURES = {figure.field: figure for figure in (
    ShippedFigure("mentioned", "analyzer", 0.998, 2848, ANALYSIS_SET),
    ShippedFigure("mention_count", "analyzer", 0.996, 2848, ANALYSIS_SET),
    ShippedFigure("list_rank", "analyzer", 0.999, 2848, ANALYSIS_SET),
    ShippedFigure("recommended", "analyzer", 0.998, 2848, ANALYSIS_SET),
    ShippedFigure("sentiment", "analyzer", SENTIMENT_HELD_OUT.accuracy, SENTIMENT_HELD_OUT.pairs,
                  "held-out hand-labelled brand-answer pairs"),
)}
