"""The simulator as a judge: it answers judge prompts (judge/prompt.py) from the ground truth of
the answers it wrote itself, and of the shipped labelled sets' answers (what `visibility judge
calibrate` sends), wrong on a configurable share of brands, and now and then with a reply that
does not validate, so the judge's whole path can be tested end to end."""

from __future__ import annotations

import json
import random
import re
from collections import OrderedDict

from visibility_assets.judge.calibration import read_labelled_set, shipped_sentiment_sets
from visibility_assets.judge.prompt import SENTIMENTS, read_prompt
from visibility_assets.tools.simulator.answers.model import BrandJudgement, ComposedAnswer
from visibility_assets.tools.simulator.behaviour import PlatformBehaviour

MAX_REMEMBERED_ANSWERS = 100_000
_THINK = re.compile(r"<think>.*?</think>", re.S)
_SPACE = re.compile(r"\s+")
# Replies a careless judge gives: prose around the JSON, a brand left out, a label of its own.
MALFORMED_REPLIES = (
    "Sure! Here is my analysis of the brands in the answer.",
    '{"brands": []}',
    '{"brands": [{"brand": "%s", "sentiment": "mixed", "role": "option", "claims": []}]}',
)


def _key(text: str) -> str:
    """The form an answer is known by: the collector stores it without its <think> block."""
    return _SPACE.sub(" ", _THINK.sub("", text)).strip()


class JudgeBook:
    """The judgements of the answers this simulator wrote, by their text."""

    def __init__(self) -> None:
        self.truths: OrderedDict[str, dict[str, BrandJudgement]] = OrderedDict()
        self.unknown = 0  # judge prompts about an answer this simulator did not write
        self._labelled: dict[str, dict[str, BrandJudgement]] | None = None

    def labelled(self) -> dict[str, dict[str, BrandJudgement]]:
        """The labels of the shipped sets, by answer (read when first asked about one)."""
        if self._labelled is None:
            self._labelled = {}
            for path in shipped_sentiment_sets():
                for pair in read_labelled_set(path):
                    self._labelled.setdefault(_key(pair.answer), {})[pair.brand] = BrandJudgement(
                        pair.brand, pair.label, "option", ())
        return self._labelled

    def remember(self, text: str | None, composed: ComposedAnswer) -> None:
        if not text or not composed.judgements:
            return
        self.truths[_key(text)] = {j.brand: j for j in composed.judgements}
        while len(self.truths) > MAX_REMEMBERED_ANSWERS:
            self.truths.popitem(last=False)

    def reply(self, prompt: str, behaviour: PlatformBehaviour, rng: random.Random) -> str | None:
        """The judge's reply to a judge prompt; None when the text is no judge prompt."""
        read = read_prompt(prompt)
        if read is None:
            return None
        _, brands, answer = read
        if rng.random() < behaviour.judge_malformed_rate:
            template = MALFORMED_REPLIES[int(rng.random() * len(MALFORMED_REPLIES))]
            return template % brands[0] if "%s" in template else template
        truth = self.truths.get(_key(answer)) or self.labelled().get(_key(answer))
        if truth is None:
            self.unknown += 1
            truth = {}
        labels = []
        for brand in brands:
            known = truth.get(brand)
            sentiment = known.sentiment if known else "neutral"
            if rng.random() < behaviour.judge_error_rate:
                sentiment = [s for s in SENTIMENTS if s != sentiment][int(rng.random() * 2)]
            labels.append({"brand": brand, "sentiment": sentiment, "role": known.role if known else "passing",
                           "claims": list(known.claims) if known else []})
        return json.dumps({"brands": labels}, ensure_ascii=False)
