"""One answer while it is being written: its random source, its language's phrases, and
the record of which tracked brands it has written so far (the ground truth).

Every random choice of an answer comes from ``Draft.rng``, in the order the text is
written; the same rng state therefore gives the same text.
"""

from __future__ import annotations

import random

from visibility_assets.tools.simulator.answers.inputs import BrandInfo, QuestionInfo
from visibility_assets.tools.simulator.answers.phrases import phrases
from visibility_assets.tools.simulator.answers.styles import PlatformStyle

FULLWIDTH = str.maketrans({chr(c): chr(c + 0xFEE0) for c in range(0x21, 0x7F)})


class Tone:
    """What one answer wrote of one brand's strengths and weaknesses."""

    __slots__ = ("strengths", "weaknesses")

    def __init__(self) -> None:
        self.strengths: tuple[str, ...] = ()
        self.weaknesses: tuple[str, ...] = ()


def pick(rng: random.Random, seq):
    """One entry of seq; a single rng.random() per pick, unlike rng.choice."""
    return seq[int(rng.random() * len(seq))]


class Draft:
    """The state of one answer being written (see the module docstring)."""

    __slots__ = (
        "rng", "style", "language", "zh", "phrases", "pool", "category", "topic", "topics", "quote", "year",
        "brands", "question_brands", "gap", "display", "mentioned", "think_mentions", "url_brands",
        "mention_sink", "url_sink", "fullwidth_next", "describing", "tone", "recommended",
    )

    def __init__(self, rng: random.Random, style: PlatformStyle, question: QuestionInfo,
                 brands: tuple[BrandInfo, ...], year: str, question_brands: tuple[int, ...]) -> None:
        self.rng = rng
        self.style = style
        self.language = question.language
        self.zh = question.language == "zh"
        self.phrases = phrases(question.language)
        self.category = question.category
        self.pool = self.phrases.consumer if question.category.consumer else self.phrases.business
        self.topic = question.category.zh if self.zh else question.category.en
        self.topics = question.category.zh if self.zh else question.category.en_plural
        self.quote = question.quote
        self.year = year
        self.brands = brands
        self.question_brands = question_brands  # tracked brands named in the quoted question
        self.gap = self.phrases.sentence_gap
        self.display: dict[int, str] = {}  # the alias each brand was first written with
        self.mentioned: set[int] = set()
        self.think_mentions: set[int] = set()
        self.url_brands: set[int] = set()
        # where mentions and URLs are recorded; set aside while references are built, which
        # may end up not being printed
        self.mention_sink = self.mentioned
        self.url_sink = self.url_brands
        self.fullwidth_next = False  # write the next new Latin name in full-width letters (ＡＷＳ)
        # The sentiment written for each brand (the judge's ground truth): the tracked brand whose
        # text is being written, and per brand the strengths and weaknesses filled in for it.
        self.describing: int | None = None
        self.tone: dict[int, Tone] = {}
        self.recommended: set[int] = set()  # named by the summary

    # -- what counts as written ------------------------------------------------------

    def record_aside(self) -> None:
        """Record what is written from now on apart: it may not be printed (references)."""
        self.mention_sink, self.url_sink = set(), set()

    def end_aside(self, keep: bool) -> None:
        """Back to recording into the answer's truth, adding what was set aside if it is printed."""
        if keep:
            self.mentioned.update(self.mention_sink)
            self.url_brands.update(self.url_sink)
        self.mention_sink, self.url_sink = self.mentioned, self.url_brands

    # -- brand names -----------------------------------------------------------------

    def _short_alias(self, aliases: tuple[str, ...]) -> str:
        if len(aliases) == 1 or self.rng.random() < 0.55:
            return aliases[0]
        return aliases[1 + int(self.rng.random() * (len(aliases) - 1))]

    def brand_name(self, i: int) -> str:
        """Tracked brand ``i`` as the body writes it: its first mention fixes an alias (now and
        then both scripts, "阿里云（Alibaba Cloud）"), later ones mostly repeat it."""
        self.mention_sink.add(i)
        rng = self.rng
        own, other = self.brands[i].aliases_for[self.language]
        shown = self.display.get(i)
        if shown is not None:
            if rng.random() < 0.15:
                return pick(rng, other) if other and rng.random() < 0.3 else self._short_alias(own)
            return shown
        x = rng.random()
        if other and x < self.style.mixed_alias_rate:
            short = self._short_alias(own)
            self.display[i] = short
            second = pick(rng, other)
            return f"{short}（{second}）" if self.zh else f"{short} ({second})"
        alias = pick(rng, other) if other and x < self.style.mixed_alias_rate + 0.07 else self._short_alias(own)
        if self.fullwidth_next:
            latin = alias if alias.isascii() else min(
                (a for a in self.brands[i].en if a.isascii()), key=len, default=None)
            if latin:
                self.fullwidth_next = False
                alias = latin.translate(FULLWIDTH)
        self.display[i] = alias
        return alias

    def plain_name(self, i: int, language: str | None = None) -> str:
        """A short alias that leaves the body's choice alone (think block, reference labels)."""
        self.mention_sink.add(i)
        return self._short_alias(self.brands[i].aliases_for[language or self.language][0])

    def item_name(self, item: int | str) -> str:
        """A list item's name: tracked brands are indices, untracked options their label."""
        return self.brand_name(item) if isinstance(item, int) else item

    def join(self, names: list[str]) -> str:
        if len(names) <= 1:
            return "".join(names)
        return self.phrases.list_comma.join(names[:-1]) + self.phrases.list_and + names[-1]

    # -- the sentiment written ----------------------------------------------------------

    def about(self, item: int | str | None) -> None:
        """What is written from now on describes `item` (a tracked brand's index), or no brand."""
        self.describing = item if isinstance(item, int) else None

    def note_tone(self, strengths: tuple[str, ...] = (), weaknesses: tuple[str, ...] = ()) -> None:
        """Strengths and weaknesses written for the brand being described, as written."""
        if self.describing is not None:
            tone = self.tone.setdefault(self.describing, Tone())
            tone.strengths += strengths
            tone.weaknesses += weaknesses

    # -- phrases ---------------------------------------------------------------------

    def fill(self, template: str, **values: str) -> str:
        """The template with pros, cons, audience, topic ... filled in, plus ``values``.
        Always draws five times from the rng, whichever placeholders the template uses."""
        rng = self.rng
        if self.question_brands and "{question}" in template:  # quoting the question repeats the brands it names
            self.mention_sink.update(self.question_brands)
        pool = self.pool
        pros = pool.pros
        pro = pick(rng, pros)
        other_pro = pick(rng, pros)
        if other_pro == pro:
            other_pro = pros[(pros.index(pro) + 1) % len(pros)]
        con, audience, weak_point = pick(rng, pool.cons), pick(rng, pool.audiences), pick(rng, self.phrases.weak_points)
        if self.describing is not None:
            self.note_tone(tuple(t for t, used in ((pro, "{pro}" in template), (other_pro, "{other_pro}" in template))
                                 if used),
                           tuple(t for t, used in ((con, "{con}" in template), (weak_point, "{weak_point}" in template))
                                 if used))
        return template.format(
            pro=pro, other_pro=other_pro, con=con, audience=audience,
            topic=self.topic, topics=self.topics, weak_point=weak_point,
            question=self.quote, year=self.year, **values,
        )

    def description(self) -> str:
        """An option's description; wordy platforms add a sentence."""
        rng = self.rng
        texts = self.phrases
        template = pick(rng, texts.description)
        text = self.fill(template)
        if rng.random() < self.style.verbosity - (0.35 if self.zh else 0.8):
            # a description that named no weakness may get one
            with_con = "{con}" not in template and rng.random() >= 0.6
            extras = texts.description_extra_con if with_con else texts.description_extra
            text += self.gap + self.fill(pick(rng, extras))
        return text
