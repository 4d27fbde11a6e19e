"""Brand mentions: every alias of the catalog found in one Aho-Corasick pass, then the rules.

Each alias hit becomes an AliasHit that is either accepted or rejected with the rule that
rejected it, so "why was my brand not counted?" has an answer. The rules, in order:

1. scope: hits in <think> blocks, URLs, domain-only link labels, the reference block;
2. boundary: a Latin alias must not touch an ASCII letter (flaws is not AWS);
3. longest match: overlapping hits keep the leftmost-longest, across all tracked brands, so
   华为 inside 华为云 never counts for 华为 (the prefix rule);
4. category: only brands of the answer's category are counted;
5. exclude_contexts: inside a context that contains the alias (小米粥), or near one that
   does not (millet within 12 characters).
"""

from __future__ import annotations

from dataclasses import dataclass
from operator import itemgetter

from ahocorasick_rs import AhoCorasick, Implementation

from visibility_assets.clean.text import Scope
from visibility_assets.config import Brand, BrandCatalog, normalize_alias

CONTEXT_WINDOW = 12
DFA_MAX_PATTERNS = 2_000

ACCEPTED = "accepted"


@dataclass(slots=True)
class AliasHit:
    brand: str
    category: str
    alias: str
    start: int  # in the normalized text
    end: int
    rule: str = ACCEPTED  # ACCEPTED, or the rule that rejected the hit

    @property
    def accepted(self) -> bool:
        return self.rule == ACCEPTED


@dataclass(frozen=True)
class ExcludeContext:
    text: str
    alias_offsets: dict[str, tuple[int, ...]]  # alias -> where it sits inside the context

    @property
    def contains_alias(self) -> bool:
        return bool(self.alias_offsets)


ASCII_LETTERS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ")


class AliasMatcher:
    """markers: phrases the caller wants located in the same pass (the analyzer's negative and
    sentiment cues); scan() returns their matches besides the alias hits, each as (pattern
    index, start, end), the marker being markers[index - first_marker]."""

    def __init__(self, catalog: BrandCatalog, markers: tuple[str, ...] = ()):
        # Normalized alias -> (brand, category, alias as written) of every brand it names.
        entries: dict[str, dict[tuple[str, str], str]] = {}
        for brand in catalog.brands:
            for alias in brand.aliases:
                entries.setdefault(normalize_alias(alias), {}).setdefault((brand.name, brand.category), alias)
        # By pattern index: the entries, whether the boundary rule applies at the start and the
        # end (the key begins / ends with an ASCII letter), and the rule of the hits it overlaps
        # when it takes a span (named by its first alias as written).
        self.patterns = [(tuple((name, category, alias) for (name, category), alias in group.items()),
                          key[0] in ASCII_LETTERS, key[-1] in ASCII_LETTERS,
                          f"overlapped_by:{next(iter(group.values()))}")
                         for key, group in entries.items()]
        # Every normalized alias, one a line: "is t part of some alias" is one C-level search.
        self.all_keys = "\n".join(entries)
        # ahocorasick-rs (Rust; offsets in characters for a str). A DFA scans faster on its own
        # but grows with the catalog, so large catalogs use the contiguous NFA (figures: docs/architecture.md,
        # "Performance").
        keys = list(entries)
        self.first_marker = len(keys)  # pattern indexes from here on are markers
        keys += markers
        implementation = Implementation.DFA if len(keys) <= DFA_MAX_PATTERNS else Implementation.ContiguousNFA
        self.automaton = AhoCorasick(keys, implementation=implementation)
        self.contexts = {(b.category, b.name): self._contexts(b) for b in catalog.brands if b.exclude_contexts}

    @staticmethod
    def _contexts(brand: Brand) -> tuple[ExcludeContext, ...]:
        aliases = {normalize_alias(a) for a in brand.aliases}
        contexts = []
        for text in (normalize_alias(c) for c in brand.exclude_contexts):
            offsets = {a: tuple(i for i in range(len(text)) if text.startswith(a, i)) for a in aliases}
            contexts.append(ExcludeContext(text, {a: o for a, o in offsets.items() if o}))
        return tuple(contexts)

    def scan(self, text: str, category: str, scope: Scope) -> tuple[list[AliasHit], list[AliasHit], list]:
        """Every alias occurrence with its verdict, in text order; the accepted ones; and every
        occurrence of a marker, anywhere in the text, by start and the longest first."""
        matches = self.automaton.find_matches_as_indexes(text, overlapping=True)
        hits: list[AliasHit] = []
        accepted: list[AliasHit] = []
        markers: list[tuple[int, int, int]] = []
        if not matches:
            return hits, accepted, markers
        # Leftmost first, and the longest of those starting at the same place, so that the
        # first hit that passes scope and boundary takes its span (rule 3). Two stable sorts
        # on C-level keys cost a third of one sort on a Python key.
        matches.sort(key=itemgetter(2), reverse=True)
        matches.sort(key=itemgetter(1))
        size, body_end, contexts = len(text), scope.body_end, self.contexts
        blocks, block, block_count = scope.blocks, 0, len(scope.blocks)
        taken_until, overlapped = -1, ""
        patterns, first_marker = self.patterns, self.first_marker
        for match in matches:
            index, start, end = match
            if index >= first_marker:
                markers.append(match)
                continue
            entries, latin_start, latin_end, overlaps = patterns[index]
            # Hits come in order of start: skip the excluded blocks that end before this one.
            while block < block_count and blocks[block][1] <= start:
                block += 1
            if (block < block_count and blocks[block][0] < end) or start >= body_end:
                rule = scope.reason_at(start, end)
            elif (latin_start and start > 0 and text[start - 1] in ASCII_LETTERS) or (
                latin_end and end < size and text[end] in ASCII_LETTERS
            ):
                rule = "boundary"
            elif start < taken_until:
                rule = overlapped
            else:
                rule = None
                taken_until, overlapped = end, overlaps
            for brand, brand_category, brand_alias in entries:
                verdict = rule or (ACCEPTED if brand_category == category else "other_category")
                hit = AliasHit(brand, brand_category, brand_alias, start, end, verdict)
                if verdict == ACCEPTED:
                    excluding = (brand_category, brand) in contexts and self._excluding_context(hit, text)
                    if excluding:
                        hit.rule = f"exclude_context:{excluding}"
                    else:
                        accepted.append(hit)
                hits.append(hit)
        return hits, accepted, markers

    def _excluding_context(self, hit: AliasHit, text: str) -> str | None:
        """The exclude_context of the hit's brand that the hit sits in or near, if any."""
        matched = text[hit.start:hit.end]
        for context in self.contexts[(hit.category, hit.brand)]:
            size = len(context.text)
            if context.contains_alias:
                # Inside an occurrence of the context: it starts where the alias sits within it.
                for offset in context.alias_offsets.get(matched, ()):
                    if hit.start >= offset and text.startswith(context.text, hit.start - offset):
                        return context.text
            else:
                low = max(0, hit.start - CONTEXT_WINDOW - size)
                high = min(len(text), hit.end + CONTEXT_WINDOW + size)
                if text.find(context.text, low, high) != -1:
                    return context.text
        return None
