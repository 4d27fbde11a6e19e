"""Where the analyzer's time goes: a clock the analyzer laps at the end of each stage when it is
given one (`visibility bench clean` reports the shares). Without one, each stage costs the
analyzer one test of None."""

from __future__ import annotations

from time import perf_counter

NORMALIZE_SCOPE = "normalize_scope"  # NFKC and case folding, the out-of-scope spans
MATCHING = "matching"  # the one Aho-Corasick pass with the matcher's rules
RULES = "rules"  # the rules after the pass: common words set aside, the out-of-scope spans blanked
STRUCTURE = "structure"  # the option lists and ranks
VALIDITY = "validity"
RECOMMENDATION = "recommendation"  # ranks, advice against a brand, mentions counted
SENTIMENT = "sentiment"
CITATIONS = "citations"
STAGES = (NORMALIZE_SCOPE, MATCHING, RULES, STRUCTURE, VALIDITY, RECOMMENDATION, SENTIMENT, CITATIONS)


class StageClock:
    """Seconds spent in each stage, summed over every answer analysed with this clock."""

    def __init__(self):
        self.seconds = dict.fromkeys(STAGES, 0.0)
        self._since = 0.0

    def start(self) -> None:
        self._since = perf_counter()

    def lap(self, stage: str) -> None:
        """The time since the last lap (or start) goes to `stage`."""
        now = perf_counter()
        self.seconds[stage] += now - self._since
        self._since = now

    def shares(self) -> dict[str, float]:
        """Each stage's share of the time of all stages."""
        total = sum(self.seconds.values()) or 1.0
        return {stage: round(seconds / total, 3) for stage, seconds in self.seconds.items()}
