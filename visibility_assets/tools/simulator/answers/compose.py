"""The answer of one chat completion, front to back: now and then a refusal, an empty text,
an error or an off-topic reply; otherwise a <think> block (reasoning platforms), an intro,
the list of options in one of the layouts, advice against a brand, a summary, a link, a
closing line and a reference block."""

from __future__ import annotations

import random
import re
from collections.abc import Mapping, Sequence

from visibility_assets.tools.simulator.answers.citations import reference_block
from visibility_assets.tools.simulator.answers.draft import Draft, pick
from visibility_assets.tools.simulator.answers.forms import list_lines
from visibility_assets.tools.simulator.answers.inputs import QuestionInfo, brand_infos, question_brands, read_question
from visibility_assets.tools.simulator.answers.model import BrandJudgement, ComposedAnswer, SimBrand
from visibility_assets.tools.simulator.answers.phrases import common_texts, phrases
from visibility_assets.tools.simulator.answers.plan import AnswerPlan, plan_answer
from visibility_assets.tools.simulator.answers.styles import PlatformStyle, style_for

# A label's other form ("UCloud (优刻得)"): the truth of discovery is the name before it.
PARENTHESISED = re.compile(r"\s*[(（][^()（）]*[)）]")


def compose_answer(rng: random.Random, question: str, brands: Sequence[SimBrand], platform: str,
                   day: str | None = None) -> str:
    """The answer text for one chat completion; deterministic given the rng state and arguments."""
    return compose_answer_detailed(rng, question, brands, platform, day).text


def compose_answer_detailed(rng: random.Random, question: str, brands: Sequence[SimBrand], platform: str,
                            day: str | None = None, factors: Mapping[str, float] | None = None) -> ComposedAnswer:
    """Like :func:`compose_answer`, but also returns the ground truth of the answer. `factors`
    multiplies the platform's weight of the brands it names (a shift a test or a demo sets)."""
    brands = tuple(brands)
    style = style_for(platform)
    info = read_question(question)
    r = rng.random()
    threshold = 0.0
    for kind, rate in (("refusal", style.refusal_rate), ("empty", style.empty_rate), ("error", style.error_rate),
                       ("irrelevant", style.irrelevant_rate)):
        threshold += rate
        if r < threshold:
            text = pick(rng, _whole_answers(kind, info.language))
            return ComposedAnswer(text=text, kind=kind, language=info.language)
    return _valid_answer(rng, question, brands, platform, day, style, info, factors)


def _whole_answers(kind: str, language: str) -> tuple[str, ...]:
    if kind == "refusal":
        return phrases(language).refusals
    if kind == "empty":
        return common_texts().empty_texts
    if kind == "error":
        return common_texts().errors
    return phrases(language).off_topic


def _valid_answer(rng: random.Random, question: str, brands: tuple[SimBrand, ...], platform: str,
                  day: str | None, style: PlatformStyle, info: QuestionInfo,
                  factors: Mapping[str, float] | None = None) -> ComposedAnswer:
    year = day[:4] if day and day[:4].isdigit() else "2025"  # labels such as "2025年云服务横评"
    quoted_brands = question_brands(info.quote, brands) if brands else ()  # those the shortened quote keeps
    draft = Draft(rng, style, info, brand_infos(brands), year, quoted_brands)
    plan = plan_answer(draft, question, brands, platform, day, factors)
    lines = []
    has_think = rng.random() < style.think_rate
    if has_think:
        lines.append(_think_block(draft, plan))
    lines += _intro(draft, plan)
    lines += list_lines(draft, plan)
    lines += _advice_against(draft, plan)
    lines += _summary(draft, plan)
    if plan.url_tail:
        lines += ["", plan.url_tail]
    if rng.random() < 0.2 * style.verbosity:
        lines += ["", pick(rng, draft.phrases.closing)]
    if plan.citations.shown:
        lines += reference_block(draft, plan.citations)
    text = "\n".join(lines).strip("\n") + "\n" * (rng.random() < 0.1)
    return _ground_truth(text, draft, plan, has_think)


def _ground_truth(text: str, draft: Draft, plan: AnswerPlan, has_think: bool) -> ComposedAnswer:
    names = [info.name for info in draft.brands]
    return ComposedAnswer(
        text=text,
        kind="answer",
        language=draft.language,
        structure=plan.structure,
        options=tuple(names[i] for i in plan.options),
        other_options=tuple(plan.fillers),
        other_brands=tuple(PARENTHESISED.sub("", f) for f in plan.fillers if f not in draft.phrases.generic_fillers),
        mentioned=tuple(name for i, name in enumerate(names) if i in draft.mentioned),
        think_mentions=tuple(name for i, name in enumerate(names) if i in draft.think_mentions),
        advised_against=(names[plan.against],) if plan.against is not None else (),
        url_only=tuple(name for i, name in enumerate(names) if i in draft.url_brands and i not in draft.mentioned),
        cited=plan.citations.cited,
        has_think=has_think,
        judgements=tuple(_judgement(draft, plan, i, name) for i, name in enumerate(names) if i in draft.mentioned),
    )


def _judgement(draft: Draft, plan: AnswerPlan, i: int, name: str) -> BrandJudgement:
    """The decision rule of the labelled sets (tests/eval/SENTIMENT.md): one side at least twice
    the other's weight."""
    tone = draft.tone.get(i)
    strengths, weaknesses = (tone.strengths, tone.weaknesses) if tone else ((), ())
    positive, negative = len(strengths), len(weaknesses) + 2 * (i == plan.against)
    if positive >= 1 and positive >= 2 * negative:
        sentiment = "positive"
    elif negative >= 1 and negative >= 2 * positive:
        sentiment = "negative"
    else:
        sentiment = "neutral"
    if i == plan.against:
        role = "advised_against"
    elif i in draft.recommended:
        role = "recommended"
    elif i in plan.options:
        role = "option"
    else:
        role = "passing"
    return BrandJudgement(name, sentiment, role, tuple(dict.fromkeys(strengths + weaknesses))[:3])


def _think_block(draft: Draft, plan: AnswerPlan) -> str:
    """The reasoning before the answer: it names up to three options and maybe one more brand
    (think_mentions; the analyzer must not count them)."""
    rng = draft.rng
    texts = draft.phrases
    names = []
    for item in [it for it in plan.items if it not in texts.generic_fillers][:3]:
        if isinstance(item, int):
            names.append(draft.plain_name(item))
            draft.think_mentions.add(item)
        else:
            names.append(item)
    aside_template = pick(rng, texts.think_aside)
    aside = ""
    if aside_template:
        candidates = plan.unlisted if plan.unlisted and rng.random() < 0.5 else plan.options[3:]
        if candidates:
            other = pick(rng, candidates)
            draft.think_mentions.add(other)
            aside = draft.fill(aside_template, other=draft.plain_name(other))
    template = pick(rng, texts.think)
    if "{question}" in template:
        draft.think_mentions.update(draft.question_brands)
    body = draft.fill(template, names=draft.join(names) if names else texts.think_unnamed, extra=aside)
    return f"<think>\n{body}\n</think>\n"


def _intro(draft: Draft, plan: AnswerPlan) -> list[str]:
    """Maybe a title, then the intro paragraph (with the trap when it goes there) and a blank line."""
    rng = draft.rng
    texts = draft.phrases
    lines = []
    if rng.random() < 0.12:
        lines.append(draft.fill(pick(rng, texts.title)) + "\n")
    if plan.structure == "table":
        templates = texts.table_intro if rng.random() < 0.6 else texts.intro
    elif plan.structure == "prose":
        templates = texts.prose_intro
    else:
        templates = texts.intro
    intro = draft.fill(pick(rng, templates))
    if plan.structure != "table" and rng.random() < (0.55 if draft.zh else 0.2) * draft.style.verbosity:
        aside = draft.fill(pick(rng, texts.intro_aside))
        # an intro that announces the list with a colon stays last
        intro = aside + draft.gap + intro if intro[-1] in "：:" else intro + draft.gap + aside
    if plan.trap_slot == 0:
        if rng.random() < 0.5:
            intro = plan.trap_text + draft.gap + intro
        else:
            intro = intro.rstrip("：:") + texts.full_stop + draft.gap + plan.trap_text
    mark = plan.citations.marker()
    if mark and intro[-1] in "：:":
        lines.append(intro[:-1] + mark + intro[-1])
    else:
        lines.append(intro + mark)
    lines.append("")
    return lines


def _advice_against(draft: Draft, plan: AnswerPlan) -> list[str]:
    """A paragraph after the list advising against a brand (unless its list item says so)."""
    if plan.against is None or plan.against_in_item:
        return []
    rng = draft.rng
    lead = pick(rng, draft.phrases.advise_against_lead)
    template = pick(rng, draft.phrases.advise_against)
    if lead.endswith(", ") and template[0] in "SO":  # "Also, skip X", "Also, one to steer clear of ..."
        template = template[0].lower() + template[1:]
    return ["", lead + draft.fill(template, name=draft.brand_name(plan.against))]


def _summary(draft: Draft, plan: AnswerPlan) -> list[str]:
    """Most answers end with a summary naming up to two options (never the one advised against)."""
    rng = draft.rng
    texts = draft.phrases
    trap_here = plan.trap_slot == len(plan.items) + 1
    if rng.random() >= (0.95 if plan.structure == "table" else 0.85):
        return ["", plan.trap_text] if trap_here else []
    named = [it for it in plan.items if it != plan.against and it not in texts.generic_fillers]
    prefix = pick(rng, texts.summary_prefixes)
    r = rng.random()
    if len(named) >= 2 and r < 0.65:
        template = pick(rng, texts.summary_two_names)
        a = named[0]
        b = named[1] if rng.random() < 0.7 else named[-1]
        values = {"a": draft.item_name(a), "b": draft.item_name(b)}
        draft.recommended.update(x for x in (a, b) if isinstance(x, int))
    elif named and r < 0.85:
        template = pick(rng, texts.summary_one_name)
        values = {"a": draft.item_name(named[0])}
        draft.recommended.update(x for x in named[:1] if isinstance(x, int))
    else:
        template, values = pick(rng, texts.summary_no_name), {}
    # English summaries continue the prefix ("In short, pick ..."), except after a heading,
    # a bold label or "TL;DR:", where they start a sentence
    starts_sentence = prefix.endswith("\n\n") or prefix.startswith("**") or prefix.startswith("TL")
    if not draft.zh and starts_sentence and template[0].islower():
        template = template[0].upper() + template[1:]
    body = draft.fill(template, **values)
    if trap_here:
        body += draft.gap + plan.trap_text
    return ["", prefix + body + plan.citations.marker()]
