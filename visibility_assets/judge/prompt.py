"""What the judge is asked, and what of its reply is accepted.

One prompt per answer covers all of its tracked brands. The reply must be one JSON object that
labels exactly the brands asked about; anything else is refused (InvalidReply), never guessed.
The whole prompt is one user message: every dialect takes that (ERNIE keeps system prompts apart).
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass

from visibility_assets.config.judge import JUDGE_PROMPT_VERSIONS

SENTIMENTS = ("positive", "neutral", "negative")
# The brand's part in the answer, from the most to the least favoured.
ROLES = ("recommended", "option", "alternative", "passing", "advised_against")
MAX_CLAIMS = 3
MAX_CLAIM_CHARS = 200
# The first line of every judge prompt: the simulator and a reader of the journal know it by it.
PROMPT_HEADER = "visibility-judge-prompt: "

_V1 = """You label how an AI assistant's answer speaks about brands. For each brand listed below, read
what the answer says about that brand and reply with:
- "sentiment": "positive", "neutral" or "negative": what the answer's own sentences about the brand
  convey. Facts without judgement are neutral; praise and criticism in comparable measure are neutral.
- "role": "recommended" (the answer's recommended choice), "option" (one option among several),
  "alternative" (offered as a substitute or fallback), "passing" (mentioned in passing), or
  "advised_against" (the answer advises against it).
- "claims": up to 3 short claims the answer makes about the brand, each copied word for word from
  the answer (no paraphrase); an empty list when there are none.
Reply with one JSON object and nothing else, labelling every brand listed and no other:
{"brands": [{"brand": "<name as listed>", "sentiment": "...", "role": "...", "claims": ["..."]}]}"""

PROMPTS = {"v1": _V1}
assert tuple(PROMPTS) == JUDGE_PROMPT_VERSIONS, "config/judge.py lists the prompt versions"

_FENCE = re.compile(r"^\s*```(?:json)?\s*(.*?)\s*```\s*$", re.S)
_SPACE = re.compile(r"\s+")


@dataclass(frozen=True)
class BrandVerdict:
    brand: str
    sentiment: str
    role: str
    claims: tuple[str, ...]


@dataclass(frozen=True)
class Reply:
    verdicts: tuple[BrandVerdict, ...]
    claims_dropped: int  # claims that are not a quote of the answer: not kept


class InvalidReply(ValueError):
    """A reply that does not validate: the reason, short, for the journal and the table."""


def judge_prompt(version: str, question: str, answer: str, brands: Sequence[str]) -> str:
    """The one user message of a judge request."""
    return (f"{PROMPT_HEADER}{version}\n{PROMPTS[version]}\n\n"
            f"Question asked: {question}\n"
            f"Brands: {json.dumps(list(brands), ensure_ascii=False)}\n"
            f"Answer:\n<<<\n{answer}\n>>>")


def read_prompt(text: str) -> tuple[str, list[str], str] | None:
    """(version, brands, answer) of a judge prompt, or None when the text is not one."""
    if not text.startswith(PROMPT_HEADER):
        return None
    version = text[len(PROMPT_HEADER):text.find("\n")]
    brands_at = text.find("\nBrands: ")
    answer_at = text.find("\nAnswer:\n<<<\n", brands_at)
    if brands_at < 0 or answer_at < 0 or not text.endswith("\n>>>"):
        return None
    brands = json.loads(text[brands_at + len("\nBrands: "):answer_at])
    return version, brands, text[answer_at + len("\nAnswer:\n<<<\n"):-len("\n>>>")]


def parse_reply(text: str, brands: Sequence[str], answer: str) -> Reply:
    """The judge's reply checked against the schema, or InvalidReply saying what is wrong."""
    fenced = _FENCE.match(text)
    try:
        data = json.loads(fenced.group(1) if fenced else text)
    except ValueError:
        raise InvalidReply("the reply is not JSON") from None
    if not isinstance(data, dict) or not isinstance(data.get("brands"), list):
        raise InvalidReply('the reply is not an object with a "brands" list')
    asked, seen, verdicts, dropped = set(brands), set(), [], 0
    haystack = _SPACE.sub(" ", answer)
    for item in data["brands"]:
        verdict, lost = _verdict(item, asked, haystack)
        if verdict.brand in seen:
            raise InvalidReply(f"brand {verdict.brand!r} labelled twice")
        seen.add(verdict.brand)
        verdicts.append(verdict)
        dropped += lost
    missing = [b for b in brands if b not in seen]
    if missing:
        raise InvalidReply(f"brands not labelled: {', '.join(missing)}")
    return Reply(tuple(verdicts), dropped)


def _verdict(item: object, asked: set[str], haystack: str) -> tuple[BrandVerdict, int]:
    if not isinstance(item, dict):
        raise InvalidReply("a brands entry is not an object")
    brand, sentiment, role = item.get("brand"), item.get("sentiment"), item.get("role")
    claims = item.get("claims", [])
    if brand not in asked:
        raise InvalidReply(f"brand {brand!r} was not asked about")
    if sentiment not in SENTIMENTS:
        raise InvalidReply(f"{brand}: sentiment {sentiment!r} is not one of {', '.join(SENTIMENTS)}")
    if role not in ROLES:
        raise InvalidReply(f"{brand}: role {role!r} is not one of {', '.join(ROLES)}")
    if not isinstance(claims, list) or not all(isinstance(c, str) for c in claims):
        raise InvalidReply(f"{brand}: claims is not a list of strings")
    kept = [c.strip() for c in claims if c.strip() and len(c.strip()) <= MAX_CLAIM_CHARS
            and _SPACE.sub(" ", c.strip()) in haystack][:MAX_CLAIMS]
    return BrandVerdict(brand, sentiment, role, tuple(kept)), len(claims) - len(kept)
