"""Keys never leave the process: every text that came from a response or an exception passes
through a SecretScrubber before it is stored, logged or put in metadata, because a careless
server or proxy may quote the request's credentials back in its error text."""

from __future__ import annotations

import os
import re
from collections.abc import Iterable

MASK = "***"
# Credentials in the shapes they travel in, whoever's they are: an Authorization header's value,
# and the prefixed keys the platforms issue (OpenAI/DeepSeek/Kimi sk-…, Perplexity pplx-…).
CREDENTIAL_PATTERNS = re.compile(
    r"(?i)(?<=bearer )[A-Za-z0-9._~+/=-]{8,}|\b(?:sk|pplx)-[A-Za-z0-9_-]{12,}")
SHORTEST_SECRET = 4  # shorter values would mask ordinary words


class SecretScrubber:
    """Replaces the given secrets, and anything shaped like a credential, with ***."""

    def __init__(self, secrets: Iterable[str | None] = ()):
        self._secrets = sorted({s for s in secrets if s and len(s) >= SHORTEST_SECRET}, key=len, reverse=True)

    @classmethod
    def for_env(cls, variables: Iterable[str | None]) -> SecretScrubber:
        """The values of these environment variables (the config's api_key_env, …)."""
        return cls(os.environ.get(name, "").strip() for name in variables if name)

    def __call__(self, text: str | None) -> str | None:
        if not text:
            return text
        for secret in self._secrets:
            if secret in text:
                text = text.replace(secret, MASK)
        return CREDENTIAL_PATTERNS.sub(MASK, text) if _may_hold_credential(text) else text


def _may_hold_credential(text: str) -> bool:
    """A cheap test before the regex: answers are scrubbed too, thousands a second."""
    lowered = text.lower()
    return "bearer " in lowered or "sk-" in lowered or "pplx-" in lowered
