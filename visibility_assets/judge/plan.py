"""Which answers the judge is asked about, and the requests that ask it.

A judgement is keyed by what decides it: the answer's content hash, the brands asked about, the
prompt version and the judge's platform and model. The same answer judged again (a re-analysis,
a backfill, a second run of the day) has the same key, and a key answered once is never sent
again. The retry of a reply that did not validate is the same key's second round.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from dataclasses import dataclass

from visibility_assets.collect.dialects import dialect_of
from visibility_assets.collect.plan import PlannedRequest
from visibility_assets.config import Platform, VisibilityConfig
from visibility_assets.config.judge import JudgeSettings
from visibility_assets.judge.prompt import judge_prompt

JOURNAL_PREFIX = "judge:"  # the journal partition of the judge's calls about one platform's answers
SCENE = "JUDGE"
MAX_ROUNDS = 2  # the first reply, and one retry when it does not validate


@dataclass(frozen=True)
class JudgeItem:
    """One valid answer that names tracked brands."""
    request_key: str  # the answer's
    date: str
    platform: str  # that answered
    category: str
    question: str
    answer: str
    content_hash: str
    brands: tuple[str, ...]  # in order of first mention


def journal_platform(platform: str) -> str:
    """The journal partition's name: never a platform's (those have no colon)."""
    return JOURNAL_PREFIX + platform


def judge_platform(config: VisibilityConfig) -> Platform:
    """The judge's platform entry as it is asked: its model, its pace, its budget, no search."""
    judge = config.judge
    assert judge is not None
    base = config.platform(judge.platform)
    return base.model_copy(update={
        "model": judge.model or base.model, "web_search": False, "rounds": 1,
        "rate_limit_rps": judge.rate_limit_rps or base.rate_limit_rps,
        "max_cost_per_day": judge.max_cost_per_day, "extra_body": {}})


def sampled(item: JudgeItem, share: float) -> bool:
    """Whether the share of answers to judge takes this one: by its content hash, so the same
    answer is chosen on every run."""
    return share >= 1.0 or int(item.content_hash[:8], 16) / 0x1_0000_0000 < share


def judge_key(item: JudgeItem, judge: JudgeSettings, platform: Platform) -> str:
    identity = json.dumps([item.content_hash, sorted(item.brands), judge.prompt_version, platform.name,
                           platform.model], ensure_ascii=False)
    return hashlib.sha256(identity.encode("utf-8")).hexdigest()[:32]


def request_key(key: str, round_: int) -> str:
    return key if round_ == 1 else f"{key}-r{round_}"


def plan_judge_requests(items: Sequence[JudgeItem], keys: Sequence[str], judge: JudgeSettings,
                        platform: Platform, round_: int = 1) -> list[PlannedRequest]:
    """The requests asking the judge about `items` (their keys in `keys`), in the judge's dialect."""
    dialect = dialect_of(platform)
    planned = []
    for item, key in zip(items, keys):
        prompt = judge_prompt(judge.prompt_version, item.question, item.answer, item.brands)
        body = dialect.body(platform, prompt)
        planned.append(PlannedRequest(
            request_key=request_key(key, round_), date=item.date, platform=journal_platform(item.platform),
            question_id=item.request_key, question_text=prompt, category=item.category, scene=SCENE,
            round=round_, priority=0, model=platform.model, prompt_hash=key, body=body))
    return planned
