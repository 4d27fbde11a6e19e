"""Realistic answer texts for the simulated AI platform.

The simulator server asks :func:`compose_answer` for the text of one chat completion.
Answers imitate how Chinese and Western assistants write in markdown: an intro, a list,
table, headings or bold lines naming a weighted random subset of the category's brands
(with varying aliases), sub-bullets that mention other brands in passing, a summary,
sometimes a ``<think>`` block, inline citation markers and a reference block, and now
and then a refusal, an empty answer, an error message or an off-topic reply.  Phrases
that trip naive substring matchers (苹果 the fruit, 小米粥, "the notion that", "flaws",
"理想的选择", "唯一加分项", full-width ＡＷＳ, brand names only inside URLs) are sprinkled in.

Everything is deterministic: the platform style and the brand weights are derived with
``hashlib`` (never ``hash()``), and all randomness of one answer comes from the ``rng``
passed in.  :func:`compose_answer_detailed` returns the same text together with the
ground truth (which brands are listed as options, which are mentioned at all, which are
advised against, which appear only inside URLs), which is handy for scoring extractors.

The modules, in the order an answer is made: ``styles`` (how each platform writes) and
``weights`` (which brands it favours, per day); ``inputs`` (what is read off the question
and the brands); ``plan`` (what the answer will say) with ``citations``; ``draft`` (names
and phrases, recording what is written); ``forms`` (the list in each layout) and
``compose`` (the whole answer).  The texts themselves are in ``../data/*.yaml``, read on
first use by ``phrases``.
"""

from visibility_assets.tools.simulator.answers.compose import compose_answer, compose_answer_detailed
from visibility_assets.tools.simulator.answers.model import (
    KINDS,
    STRUCTURES,
    ComposedAnswer,
    SimBrand,
    sim_brands_by_category,
)
from visibility_assets.tools.simulator.answers.styles import KNOWN_PLATFORMS, PlatformStyle, style_for
from visibility_assets.tools.simulator.answers.weights import brand_weights

__all__ = [
    "SimBrand",
    "sim_brands_by_category",
    "PlatformStyle",
    "ComposedAnswer",
    "KNOWN_PLATFORMS",
    "STRUCTURES",
    "KINDS",
    "style_for",
    "brand_weights",
    "compose_answer",
    "compose_answer_detailed",
]
