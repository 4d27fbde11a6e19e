"""How each simulated platform writes: hand-made styles for the known platforms
(data/platform_styles.yaml), a style derived from a hash of the name for any other."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from functools import lru_cache

from visibility_assets.tools.simulator.answers.model import STRUCTURES
from visibility_assets.tools.simulator.answers.phrases import platform_styles

#: Platforms with a hand-written character; any other name gets a hash-derived style.
KNOWN_PLATFORMS: tuple[str, ...] = ("deepseek", "qwen", "ernie", "hunyuan", "doubao", "kimi")

CITATION_MARKERS = ("bracket", "caret", "citation", "footnote")  # [1]  [^1^]  [citation:1]  [^1]


def stable_digest(*parts: str) -> bytes:
    """Digest of the parts; hashlib, never hash(), so styles and weights survive PYTHONHASHSEED."""
    return hashlib.sha256("\x1f".join(parts).encode("utf-8")).digest()


def stable_unit(*parts: str) -> float:
    """A stable float in [0, 1) derived from the parts."""
    return int.from_bytes(stable_digest(*parts)[:8], "big") / 18446744073709551616.0


def platform_key(platform: str) -> str:
    return platform.strip().lower()


@dataclass(frozen=True)
class PlatformStyle:
    """How one simulated platform tends to write; derive it with :func:`style_for`.

    All ``*_rate`` fields are probabilities per answer (``against_rate``, ``trap_rate``,
    ``citation_rate`` ... are per *valid* answer).
    """

    platform: str
    #: relative preference for each layout in :data:`STRUCTURES`
    structure_weights: tuple[tuple[str, float], ...]
    #: "###" or "####" for per-option headings
    heading_prefix: str
    #: share of heading layouts that number the options ("### 1. 腾讯云")
    numbered_headings: float
    #: probability that list items put the option name in bold
    bold_names: float
    #: probability that an item gets sub-bullets
    sub_bullet_rate: float
    #: share of valid answers with citations
    citation_rate: float
    #: one of "bracket" [1], "caret" [^1^], "citation" [citation:1], "footnote" [^1]
    citation_marker: str
    #: share of cited answers that end with a reference block
    reference_block_rate: float
    #: share of answers that start with a <think>...</think> block
    think_rate: float
    refusal_rate: float
    empty_rate: float
    error_rate: float
    irrelevant_rate: float
    #: share of valid answers that advise against one brand
    against_rate: float
    #: share of valid answers containing a matcher trap phrase
    trap_rate: float
    #: share of list items decorated with an emoji
    emoji_rate: float
    #: share of first brand mentions written bilingually, "阿里云（Alibaba Cloud）"
    mixed_alias_rate: float
    #: length multiplier, about 0.7 (terse) to 1.4 (wordy)
    verbosity: float
    #: alias fragments of the platform's own ecosystem, which it favours a little
    home_keywords: tuple[str, ...]
    _cumulative_shares: tuple[float, ...] = field(default=(), init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        total = 0.0
        cumulative = []
        weights = dict(self.structure_weights)
        for s in STRUCTURES:
            total += max(0.0, float(weights.get(s, 0.0)))
            cumulative.append(total)
        if total <= 0:
            cumulative = [float(i + 1) for i in range(len(STRUCTURES))]
            total = cumulative[-1]
        object.__setattr__(self, "_cumulative_shares", tuple(c / total for c in cumulative))

    def structure_at(self, u: float) -> str:
        """The layout a uniform draw ``u`` in [0, 1) falls on."""
        for structure, share in zip(STRUCTURES, self._cumulative_shares):
            if u < share:
                return structure
        return STRUCTURES[-1]


def _known_name(key: str) -> str | None:
    styles, aliases = platform_styles()
    if key in styles:
        return key
    if key in aliases:
        return aliases[key]
    for known in KNOWN_PLATFORMS:  # "deepseek-chat", "qwen-max", "ernie_4.0" ...
        if key.startswith(known) and len(key) > len(known) and key[len(known)] in "-_:/ .":
            return known
    return None


@lru_cache(maxsize=512)
def style_for(platform: str) -> PlatformStyle:
    """The writing style of a platform: hand-made for the known ones, hash-derived otherwise."""
    key = platform_key(platform)
    known = _known_name(key)
    if known is None:
        return _hashed_style(platform, key)
    args = dict(platform_styles()[0][known])
    weights = args.pop("structure_weights")
    return PlatformStyle(platform=platform, structure_weights=tuple((s, weights[s]) for s in STRUCTURES), **args)


def _hashed_style(platform: str, key: str) -> PlatformStyle:
    """A plausible style spread over the ranges the known platforms span, one byte of the digest per field."""
    d = stable_digest("style", key)

    def u(i: int) -> float:
        return d[i] / 255.0

    return PlatformStyle(
        platform=platform,
        structure_weights=tuple((s, round(0.15 + u(i) ** 2 * 1.0, 4)) for i, s in enumerate(STRUCTURES)),
        heading_prefix="###" if d[6] < 170 else "####",
        numbered_headings=round(0.3 + 0.5 * u(7), 3),
        bold_names=round(0.6 + 0.38 * u(8), 3),
        sub_bullet_rate=round(0.15 + 0.35 * u(9), 3),
        citation_rate=round(0.15 + 0.55 * u(10), 3),
        citation_marker=CITATION_MARKERS[d[11] % len(CITATION_MARKERS)],
        reference_block_rate=round(0.5 + 0.45 * u(12), 3),
        think_rate=0.0 if d[13] < 160 else round(0.08 + 0.3 * u(14), 3),
        refusal_rate=round(0.03 + 0.02 * u(15), 4),
        empty_rate=round(0.015 + 0.015 * u(16), 4),
        error_rate=round(0.015 + 0.015 * u(17), 4),
        irrelevant_rate=round(0.015 + 0.015 * u(18), 4),
        against_rate=round(0.08 + 0.04 * u(19), 3),
        trap_rate=round(0.2 + 0.2 * u(20), 3),
        emoji_rate=0.0 if d[21] < 180 else round(0.1 + 0.4 * u(22), 3),
        mixed_alias_rate=round(0.06 + 0.14 * u(23), 3),
        verbosity=round(0.75 + 0.6 * u(24), 3),
        home_keywords=(),
    )
