"""The list of options in each layout of STRUCTURES: a numbered list, bullets, a table,
one heading per option, bold lines, or prose.  Each writer returns the lines of the list;
the options are plan.items, tracked brands (indices) and untracked labels."""

from __future__ import annotations

from collections.abc import Callable

from visibility_assets.tools.simulator.answers.draft import Draft, pick
from visibility_assets.tools.simulator.answers.phrases import common_texts
from visibility_assets.tools.simulator.answers.plan import AnswerPlan


def list_lines(draft: Draft, plan: AnswerPlan) -> list[str]:
    # one choice per answer, like a real writer (drawn whatever the layout, so the rng
    # sequence does not depend on it)
    bold_names = draft.rng.random() < draft.style.bold_names
    lines = WRITERS[plan.structure](draft, plan, bold_names)
    draft.about(None)  # what follows the list describes no option in particular
    return lines


def _numbered(draft: Draft, plan: AnswerPlan, bold_names: bool) -> list[str]:
    separator = pick(draft.rng, draft.phrases.name_separators)
    return _list(draft, plan, bold_names, separator, lambda index: f"{index + 1}. ", "   - ")


def _bullets(draft: Draft, plan: AnswerPlan, bold_names: bool) -> list[str]:
    separator = pick(draft.rng, draft.phrases.name_separators)
    bullet = "- " if draft.rng.random() < 0.8 else "* "
    return _list(draft, plan, bold_names, separator, lambda index: bullet, "  - ")


def _list(draft: Draft, plan: AnswerPlan, bold_names: bool, separator: str, lead: Callable[[int], str],
          sub_lead: str) -> list[str]:
    """One line per item, "<lead><emoji><name><separator><description>", and its sub-bullets."""
    lines = []
    for index, item in enumerate(plan.items):
        draft.about(item)
        emoji = _emoji(draft)
        name = draft.item_name(item)
        if bold_names or draft.rng.random() < 0.03:
            name = f"**{name}**"
        lines.append(f"{lead(index)}{emoji}{name}{separator}{_described(draft, plan, index, item)}")
        lines.extend(sub_lead + s for s in _sub_bullets(draft, item))
    return lines


def _table(draft: Draft, plan: AnswerPlan, bold_names: bool) -> list[str]:
    """A markdown table, then notes that would not fit in a cell (a trap, advice against, a link)."""
    rng = draft.rng
    texts = draft.phrases
    layout = pick(rng, texts.table_layouts)
    lines = [layout.header, layout.rule]
    bold_cells = rng.random() < draft.style.bold_names  # tables decide for themselves
    cells_of = {"pro": draft.pool.pros, "con": draft.pool.cons, "audience": draft.pool.audiences,
                "price": texts.price_cells, "rating": texts.rating_cells}
    notes = []
    for index, item in enumerate(plan.items):
        draft.about(item)
        name = draft.item_name(item)
        cells = [pick(rng, cells_of[column]) for column in layout.columns]
        if not draft.zh:
            cells = [c[0].upper() + c[1:] if c[:1].islower() else c for c in cells]
        draft.note_tone(tuple(c for c, column in zip(cells, layout.columns) if column == "pro"),
                        tuple(c for c, column in zip(cells, layout.columns) if column == "con"))
        cells[0] += plan.citations.marker(item)
        lines.append("| " + " | ".join([f"**{name}**" if bold_cells else name] + cells) + " |")
        if plan.trap_slot == index + 1:
            notes.append(plan.trap_text)
        if plan.against_in_item and item == plan.against:
            notes.append(name + texts.colon + draft.fill(pick(rng, texts.advise_against_inline)))
        if plan.url_item is not None and item == plan.url_item:
            notes.append(plan.url_line)
    draft.about(None)
    named = [it for it in plan.items if it not in texts.generic_fillers]
    if len(named) >= 2 and rng.random() < 0.7:
        a = named[0]
        b = named[1 + int(rng.random() * (len(named) - 1))]
        notes.insert(0, draft.fill(pick(rng, texts.table_comparison), a=draft.item_name(a), b=draft.item_name(b)))
    elif rng.random() < 0.5:
        notes.insert(0, pick(rng, texts.table_disclaimer))
    if notes:
        lines += ["", draft.gap.join(notes)]
    return lines


def _headings(draft: Draft, plan: AnswerPlan, bold_names: bool) -> list[str]:
    prefix = draft.style.heading_prefix
    numbered = draft.rng.random() < draft.style.numbered_headings
    lines = []
    for index, item in enumerate(plan.items):
        draft.about(item)
        name = draft.item_name(item)
        lines += [f"{prefix} {index + 1}. {name}" if numbered else f"{prefix} {name}", "",
                  _described(draft, plan, index, item)]
        sub_bullets = _sub_bullets(draft, item)
        if sub_bullets:
            lines.append("")
            lines.extend(f"- {s}" for s in sub_bullets)
        lines.append("")
    lines.pop()
    return lines


def _bold_lines(draft: Draft, plan: AnswerPlan, bold_names: bool) -> list[str]:
    """Each option's name in bold on a line of its own, its description on the next."""
    lines = []
    for index, item in enumerate(plan.items):
        draft.about(item)
        lines.append(f"{_emoji(draft)}**{draft.item_name(item)}**")
        lines.append(_described(draft, plan, index, item))
        lines.extend(f"- {s}" for s in _sub_bullets(draft, item))
        lines.append("")
    lines.pop()
    return lines


def _prose(draft: Draft, plan: AnswerPlan, bold_names: bool) -> list[str]:
    """A sentence naming the options, then one sentence per option, in paragraphs of three or more."""
    rng = draft.rng
    texts = draft.phrases
    items = plan.items
    single = len(items) == 1
    names = [draft.item_name(it) for it in items[:4]]
    sentences = [] if single else [draft.fill(pick(rng, texts.prose_list_sentence), names=draft.join(names))]
    paragraphs = []
    for index, item in enumerate(items):
        draft.about(item)
        name = draft.item_name(item)
        sentence = draft.fill(pick(rng, texts.prose_item if index else texts.prose_first_item), name=name)
        if rng.random() < draft.style.verbosity - (0.4 if draft.zh else 0.75) or single:
            sentence += draft.gap + draft.fill(pick(rng, texts.description_extra))
        if single:  # one option: say more about it
            sentence += draft.gap + draft.description()
        sentences.append(_with_item_notes(draft, plan, index, item, sentence))
        if len(sentences) >= 3 and rng.random() < 0.4:
            paragraphs.append(draft.gap.join(sentences))
            sentences = []
    if sentences:
        paragraphs.append(draft.gap.join(sentences))
    return [line for paragraph in paragraphs for line in (paragraph, "")][:-1]


def _described(draft: Draft, plan: AnswerPlan, index: int, item: int | str) -> str:
    return _with_item_notes(draft, plan, index, item, draft.description())


def _with_item_notes(draft: Draft, plan: AnswerPlan, index: int, item: int | str, text: str) -> str:
    """An item's text followed by what the plan put there: the trap, a citation marker, the
    advice against it, the link to its site."""
    if plan.trap_slot == index + 1:
        text += draft.gap + plan.trap_text
    text += plan.citations.marker(item)
    if plan.against_in_item and item == plan.against:
        text += draft.gap + draft.fill(pick(draft.rng, draft.phrases.advise_against_inline))
    if plan.url_item is not None and item == plan.url_item:
        text += draft.gap + plan.url_line
    return text


def _sub_bullets(draft: Draft, item: int | str) -> list[str]:
    """Sub-bullets for some items (pros, cons, price ...); one may name another tracked brand
    in passing, a mention that is not an option."""
    rng = draft.rng
    style = draft.style
    if rng.random() >= style.sub_bullet_rate:
        return []
    count = 1 + int(rng.random() * (2 + (style.verbosity > 1.0)))
    templates = draft.phrases.sub_bullets
    start = int(rng.random() * len(templates))
    n = len(draft.brands)
    named_other = False
    bullets = []
    for j in range(count):
        if n >= 2 and not named_other and rng.random() < 0.3:
            named_other = True
            name = draft.brand_name(pick(rng, [i for i in range(n) if i != item]))
            if draft.zh and name[:1].isascii():
                name = f" {name} "  # Chinese text puts spaces around Latin names: 与 AWS 定位相近
            bullets.append(draft.fill(pick(rng, draft.phrases.sub_bullets_other_brand), other=name))
        else:
            bullets.append(draft.fill(templates[(start + j) % len(templates)]))
    return bullets


def _emoji(draft: Draft) -> str:
    rate = draft.style.emoji_rate
    return pick(draft.rng, common_texts().emojis) + " " if rate and draft.rng.random() < rate else ""


WRITERS: dict[str, Callable[[Draft, AnswerPlan, bool], list[str]]] = {
    "numbered": _numbered,
    "bullets": _bullets,
    "table": _table,
    "headings": _headings,
    "bold_lines": _bold_lines,
    "prose": _prose,
}
