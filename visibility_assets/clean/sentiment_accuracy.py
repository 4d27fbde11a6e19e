"""What the lexicon's sentiment labels are worth: their accuracy on the held-out half of the
hand-labelled set (tests/eval/sentiment.jsonl), measured for this analyzer version.

The report and the workspace print it beside every sentiment figure the lexicon produced, so no
one reads a label that is right six times in ten as a fact. tests/clean/test_sentiment_eval.py measures
it again and fails when the figure or the analyzer version here is stale.
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

    def sentence(self) -> str:
        return (f"the lexicon (analyzer {self.analyzer_version}) was right on {self.accuracy:.0%} of {self.pairs}"
                f" held-out hand-labelled"
                f" brand-answer pairs (macro-F1 {self.macro_f1:.2f}; always guessing the commonest label:"
                f" {self.majority_accuracy:.0%})")


LEXICON_HELD_OUT = MeasuredAccuracy(analyzer_version="1.5.0", pairs=317, accuracy=0.621, macro_f1=0.625,
                                    majority_accuracy=0.394)
