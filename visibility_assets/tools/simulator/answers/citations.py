"""Citations: the references an answer cites (a brand's own site, third-party reviews), the
markers in the text that point at them ([1], [^1^], [citation:1], [^1]) and the reference
block at the end.  A brand may appear only in a reference URL (its domain or a G2
comparison slug): the ground truth records it as url_only, never as mentioned."""

from __future__ import annotations

import re

from visibility_assets.tools.simulator.answers.draft import Draft, pick
from visibility_assets.tools.simulator.answers.phrases import Site, phrases

ALNUM = "abcdefghijklmnopqrstuvwxyz0123456789"
URL_FIELD = re.compile(r"\{(\w+)(?::(\d+))?\}")  # {digits:9}, {alnum:6}, {topic_slug} ...
MAX_OWN_SITE_REFERENCES = 4


class Citations:
    __slots__ = ("rng", "cited", "shown", "marker_kind", "marker_rate", "references", "own_reference_of")

    def __init__(self, draft: Draft) -> None:
        rng = draft.rng
        style = draft.style
        self.rng = rng
        self.cited = rng.random() < style.citation_rate
        self.shown = self.cited and rng.random() < style.reference_block_rate  # with a reference block
        self.marker_kind = style.citation_marker
        self.marker_rate = 0.75 if style.citation_marker == "caret" else 0.5  # Kimi marks nearly every sentence
        self.references: list[tuple[str, str]] = []  # (label, url)
        self.own_reference_of: dict[int, int] = {}  # brand -> number of the reference to its own site

    def marker(self, item: int | str | None = None) -> str:
        """Markers to append to a sentence (often none); an item's own site is the reference it cites."""
        rng = self.rng
        if not self.cited or rng.random() >= self.marker_rate:
            return ""
        count = len(self.references)
        number = self.own_reference_of.get(item)
        if number is None:
            number = 1 + int(rng.random() * count)
        text = _marker(self.marker_kind, number)
        if count > 1 and rng.random() < 0.2:
            second = 1 + int(rng.random() * count)
            if second != number:
                text += _marker(self.marker_kind, second)
        return text


def plan_citations(draft: Draft, options: list[int], unlisted: list[int]) -> Citations:
    """Whether the answer cites and, if so, its references."""
    citations = Citations(draft)
    if not citations.cited:
        return citations
    rng = draft.rng
    infos = draft.brands
    references = citations.references
    # what the references name counts as written only when the reference block is printed
    draft.record_aside()
    for i in options:
        if infos[i].hosts and len(references) < MAX_OWN_SITE_REFERENCES and rng.random() < 0.45:
            references.append(_own_site_reference(draft, i, generic=rng.random() < 0.3))
            citations.own_reference_of[i] = len(references)
    if unlisted and rng.random() < 0.25:  # a brand that shows up only through its URL
        j = pick(rng, unlisted)
        if infos[j].hosts:
            references.append(_own_site_reference(draft, j, generic=True))
    for _ in range(1 + int(rng.random() * 3)):
        if rng.random() < 0.7 or not (options and unlisted):
            pair = options[:2]
        else:
            pair = [options[0], pick(rng, unlisted)]
        references.append(_third_party_reference(draft, pair))
    if len(references) > 2 and rng.random() < 0.5:
        _shuffle(rng, citations)
    draft.end_aside(keep=citations.shown)
    return citations


def _shuffle(rng, citations: Citations) -> None:
    order = list(range(len(citations.references)))
    rng.shuffle(order)
    citations.references[:] = [citations.references[o] for o in order]
    new_number = {old + 1: new + 1 for new, old in enumerate(order)}
    citations.own_reference_of = {i: new_number[n] for i, n in citations.own_reference_of.items()}


def _marker(kind: str, number: int) -> str:
    if kind == "caret":
        return f"[^{number}^]"
    if kind == "citation":
        return f"[citation:{number}]"
    if kind == "footnote":
        return f"[^{number}]"
    return f"[{number}]"


def _own_site_reference(draft: Draft, i: int, generic: bool) -> tuple[str, str]:
    """A page on brand ``i``'s own site; a generic label ("官方文档") leaves the brand unnamed."""
    rng = draft.rng
    host = pick(rng, draft.brands[i].hosts)
    draft.url_sink.add(i)
    if generic:
        entry = pick(rng, draft.phrases.own_site_labels_generic)
        label = entry.label
    else:
        entry = pick(rng, draft.phrases.own_site_labels)
        label = entry.label.format(name=draft.plain_name(i))
    return label, f"https://{host}/{entry.path}"


def _third_party_reference(draft: Draft, pair: list[int]) -> tuple[str, str]:
    """A review or discussion page, mostly from a site of the answer's language; its label
    may name up to two brands of ``pair``."""
    rng = draft.rng
    same_language = rng.random() < 0.8
    language = draft.language if same_language else ("en" if draft.zh else "zh")
    site = pick(rng, phrases(language).sites)
    template = pick(rng, site.labels)
    names = {}
    if "{a}" in template:
        if len(pair) >= 2:
            names["a"] = draft.plain_name(pair[0], language)
            if "{b}" in template:
                names["b"] = draft.plain_name(pair[1], language)
        else:
            template = next((t for t in site.labels if "{a}" not in t), "{topic}")
    category = draft.category
    zh = language == "zh"
    label = template.format(topic=category.zh if zh else category.en, topics=category.zh if zh else category.en_plural,
                            year=draft.year, **names)
    return label, _site_url(draft, site, template, pair)


def _site_url(draft: Draft, site: Site, label_template: str, pair: list[int]) -> str:
    rng = draft.rng
    url = site.url
    if site.alt_url and rng.random() >= site.url_share:
        url = site.alt_url
    slugs = {"topic_slug": draft.category.slug}
    if site.compare_url and len(pair) >= 2 and ("{a}" in label_template or "comparison" in label_template):
        url = site.compare_url
        a, b = pair[0], pair[1]
        slugs.update(a_slug=draft.brands[a].slug, b_slug=draft.brands[b].slug)
        draft.url_sink.update((a, b))

    def field(match: re.Match) -> str:
        name, size = match.group(1), match.group(2)
        if name == "digits":
            n = int(size)
            return str(int(rng.random() * 9 * 10 ** (n - 1)) + 10 ** (n - 1))
        if name == "alnum":
            return "".join(pick(rng, ALNUM) for _ in range(int(size)))
        return slugs[name]

    return URL_FIELD.sub(field, url)


def reference_block(draft: Draft, citations: Citations) -> list[str]:
    """The lines of the reference block, in one of three layouts."""
    rng = draft.rng
    lines = ["", pick(rng, draft.phrases.reference_headings)]
    layout = int(rng.random() * 3)
    for number, (label, url) in enumerate(citations.references, 1):
        if layout == 0:
            head = f"[^{number}^]" if citations.marker_kind == "caret" and rng.random() < 0.5 else f"[{number}]"
            lines.append(f"{head} {label} {url}")
        elif layout == 1:
            lines.append(f"{number}. [{label}]({url})")
        else:
            colon = " " if label[-1] in "？?!！:：" else draft.phrases.colon
            lines.append(f"[{number}] {label}{colon}{url}")
    return lines
