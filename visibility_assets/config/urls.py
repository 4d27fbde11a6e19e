"""An endpoint URL, checked when the config loads (scheme, host, port), so a typo fails the
command before anything is written rather than the first request after it."""

from __future__ import annotations

from typing import Annotated
from urllib.parse import urlsplit

from pydantic import AfterValidator


def endpoint_url(url: str) -> str:
    if any(c.isspace() for c in url):
        raise ValueError(f"{url!r} is not a URL: it contains whitespace")
    try:
        parts = urlsplit(url)
        port = parts.port  # raises on a port out of range or not a number
    except ValueError as exc:
        raise ValueError(f"{url!r} is not a valid URL: {exc}") from None
    if parts.scheme not in ("http", "https"):
        raise ValueError(f"{url!r} must start with http:// or https://")
    if not parts.hostname:
        raise ValueError(f"{url!r} has no host")
    if port == 0:
        raise ValueError(f"{url!r}: port 0 is not a port a server listens on")
    return url


EndpointUrl = Annotated[str, AfterValidator(endpoint_url)]
