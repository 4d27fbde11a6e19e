"""judge.yaml (optional): a language model that labels each brand of an answer.

Without the file there is no judge and the lexicon's labels stand alone. With it, every valid
answer that names a tracked brand (or a share of them) is sent once to the judge: one call per
answer covering all of its brands, paced, retried, billed and journaled as collection is.
"""

from __future__ import annotations

from pydantic import Field

from visibility_assets.config.entry import Number, _Entry

# The prompts the judge knows (judge/prompt.py writes them). A new wording is a new version, so
# that a judgement is only ever reused under the prompt that produced it.
JUDGE_PROMPT_VERSIONS = ("v1",)


class JudgeSettings(_Entry):
    platform: str = Field(min_length=1)  # a platform of platforms.yaml, asked through its dialect
    model: str | None = Field(default=None, min_length=1)  # None: the platform's own model
    prompt_version: str = JUDGE_PROMPT_VERSIONS[-1]
    share: Number = Field(default=1.0, gt=0, le=1)  # of the eligible answers, chosen by content hash
    max_cost_per_day: Number | None = Field(default=None, gt=0, le=1e9)  # in the price table's currency
    # Requests per second for the judge's calls; None: the platform's rate_limit_rps. The judge
    # shares the platform's limit with its own collection when both run at once: set a share.
    rate_limit_rps: Number | None = Field(default=None, gt=0, le=1000)


class JudgeFile(_Entry):
    judge: JudgeSettings | None = None
