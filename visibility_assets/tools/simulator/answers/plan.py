"""What a valid answer will say, decided before its text is written: which brands it lists
and in which order, which untracked options join them, the layout, the brand it advises
against, its citations, where a trap phrase and a URL go."""

from __future__ import annotations

import random
from collections.abc import Mapping
from dataclasses import dataclass

from visibility_assets.tools.simulator.answers.citations import Citations, plan_citations
from visibility_assets.tools.simulator.answers.draft import Draft, pick
from visibility_assets.tools.simulator.answers.inputs import fillers_for, question_brands
from visibility_assets.tools.simulator.answers.model import SimBrand
from visibility_assets.tools.simulator.answers.phrases import common_texts
from visibility_assets.tools.simulator.answers.styles import PlatformStyle, platform_key
from visibility_assets.tools.simulator.answers.weights import platform_weights

#: How many tracked brands a list names when it names more than one.
OPTION_COUNTS = (2, 2, 3, 3, 3, 3, 4, 4, 4, 5, 5, 6)


@dataclass(slots=True)
class AnswerPlan:
    options: list[int]  # tracked brands listed as options, in list order
    unlisted: list[int]  # the other tracked brands
    items: list[int | str]  # the list as written: tracked brands and untracked labels
    fillers: list[str]  # the untracked labels among items
    structure: str = "prose"
    against: int | None = None  # the brand the answer advises against
    against_in_item: bool = False  # said in its list item rather than in a paragraph after the list
    citations: Citations | None = None
    trap_slot: int = -1  # 0 the intro, 1..len(items) after that item, len(items) + 1 the summary
    trap_text: str = ""
    url_item: int | None = None  # the option whose description links to its own site
    url_line: str = ""
    url_tail: str = ""  # a paragraph after the summary linking to a comparison of two brands


def plan_answer(draft: Draft, question: str, brands: tuple[SimBrand, ...], platform: str,
                day: str | None, factors: Mapping[str, float] | None = None) -> AnswerPlan:
    rng = draft.rng
    options = _choose_options(rng, draft.style, question, brands, platform, day, factors)
    items, fillers = _add_fillers(rng, options, brands, draft)
    listed = set(options)
    plan = AnswerPlan(options, [i for i in range(len(brands)) if i not in listed], items, fillers)
    plan.against, plan.against_in_item = _choose_advised_against(rng, draft.style, len(brands), options, plan.unlisted)
    _choose_structure(draft, plan, brands)
    plan.citations = plan_citations(draft, options, plan.unlisted)
    _place_trap(draft, plan)
    draft.fullwidth_next = rng.random() < (0.05 if draft.zh else 0.01)
    _place_body_url(draft, plan)
    return plan


def _choose_options(rng: random.Random, style: PlatformStyle, question: str, brands: tuple[SimBrand, ...],
                    platform: str, day: str | None, factors: Mapping[str, float] | None = None) -> list[int]:
    """Mostly the brands the question names, then a weighted sample of the platform's favourites."""
    n = len(brands)
    named = [i for i in question_brands(question, brands) if rng.random() < 0.92] if n else []
    x = rng.random()
    if n == 0 or (x < 0.06 and not named):
        count = 0
    elif x < 0.16:
        count = 1
    else:
        count = pick(rng, OPTION_COUNTS)
        if style.verbosity > 1.1 and rng.random() < 0.3:
            count += 1
    count = min(max(count, len(named)), n)
    options = list(named)
    if count > len(options):
        weights = platform_weights(platform_key(platform), brands, day)
        if factors:
            weights = tuple(w * factors.get(b.name, 1.0) for w, b in zip(weights, brands))
        # weighted sampling without replacement: the largest keys u ** (1 / weight) win
        keyed = sorted(((rng.random() ** (1.0 / weights[i]), i) for i in range(n) if i not in named), reverse=True)
        options.extend(i for _, i in keyed[: count - len(options)])
    if len(options) > 2 and rng.random() < 0.25:  # now and then two neighbours swap ranks
        j = 1 + int(rng.random() * (len(options) - 1))
        options[j - 1], options[j] = options[j], options[j - 1]
    return options


def _add_fillers(rng: random.Random, options: list[int], brands: tuple[SimBrand, ...],
                 draft: Draft) -> tuple[list[int | str], list[str]]:
    """Untracked options, mostly appended: always some when no tracked brand is listed."""
    if not options:
        count = 2 + int(rng.random() * 3)
    elif rng.random() < 0.2:
        count = 1 + (rng.random() < 0.3)
    else:
        count = 0
    items: list[int | str] = list(options)
    fillers: list[str] = []
    if count:
        usable = fillers_for(brands, draft.language, draft.category)
        for label in rng.sample(usable, min(count, len(usable))):
            fillers.append(label)
            position = len(items) if rng.random() < 0.6 else int(rng.random() * (len(items) + 1))
            items.insert(position, label)
    return items, fillers


def _choose_advised_against(rng: random.Random, style: PlatformStyle, n: int, options: list[int],
                            unlisted: list[int]) -> tuple[int | None, bool]:
    """The brand advised against, if any, and whether that is said inside its list item."""
    if n and rng.random() < style.against_rate:
        if unlisted and (not options or rng.random() < 0.5):
            return pick(rng, unlisted), False
        if options:
            against = options[-1] if rng.random() < 0.6 else pick(rng, options)
            return against, rng.random() < 0.5
    return None, False


def _choose_structure(draft: Draft, plan: AnswerPlan, brands: tuple[SimBrand, ...]) -> None:
    rng = draft.rng
    plan.structure = draft.style.structure_at(rng.random())
    if len(plan.items) == 1 and plan.structure in ("table", "numbered") and rng.random() < 0.6:
        plan.structure = "prose"  # a one-row table or a list of one reads oddly
    if plan.structure == "prose":  # generic labels ("其他厂商") do not read as sentence subjects
        generic = draft.phrases.generic_fillers
        kept = [it for it in plan.items if it not in generic]
        if not kept:
            kept = [next(f for f in fillers_for(brands, draft.language, draft.category) if f not in generic)]
            plan.fillers.append(kept[0])
        plan.fillers = [f for f in plan.fillers if f in kept]
        plan.items = kept


def _place_trap(draft: Draft, plan: AnswerPlan) -> None:
    rng = draft.rng
    if rng.random() < draft.style.trap_rate:
        plan.trap_slot = int(rng.random() * (len(plan.items) + 2))
        after_item = 1 <= plan.trap_slot <= len(plan.items)
        traps = draft.phrases.traps_item if after_item and rng.random() < 0.6 else draft.phrases.traps_anywhere
        plan.trap_text = pick(rng, traps)


def _place_body_url(draft: Draft, plan: AnswerPlan) -> None:
    """Now and then an option's description links to its own site, or a paragraph after the
    summary links to a comparison of two brands."""
    rng = draft.rng
    infos = draft.brands
    u = rng.random()
    if u < 0.07:
        candidates = [i for i in plan.options if infos[i].hosts]
        if candidates:
            plan.url_item = pick(rng, candidates)
            host = pick(rng, infos[plan.url_item].hosts)
            draft.url_brands.add(plan.url_item)
            sentence = pick(rng, draft.phrases.own_url_sentences)
            plan.url_line = sentence.format(url=f"https://{host}/{pick(rng, common_texts().own_site_paths)}")
    elif u < 0.12 and plan.options and len(infos) >= 2:
        a = plan.options[0]
        if plan.unlisted and rng.random() < 0.6:
            b = pick(rng, plan.unlisted)
        else:
            b = plan.options[1] if len(plan.options) > 1 else None
        if b is not None:
            draft.url_brands.update((a, b))
            sentence = pick(rng, draft.phrases.comparison_url_sentences)
            plan.url_tail = sentence.format(url=f"https://www.g2.com/compare/{infos[a].slug}-vs-{infos[b].slug}")
