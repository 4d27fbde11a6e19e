"""What kind of source a cited URL is: the brands' own domains, then the domain table of the
config (the built-in one with domains.yaml over it). A domain covers its subdomains and the
longest match wins; an unknown host is `other`, under its registrable domain."""

from __future__ import annotations

from collections.abc import Sequence
from functools import lru_cache
from urllib.parse import urlsplit

from visibility_assets.config import BrandCatalog, DomainClass

OWN, OTHER = "own", "other"
# Second-level suffixes under which the registrable domain has three labels (sina.com.cn).
SECOND_LEVEL = frozenset({"com.cn", "net.cn", "org.cn", "gov.cn", "edu.cn", "ac.cn", "co.uk", "org.uk", "ac.uk",
                          "gov.uk", "com.au", "co.jp", "com.hk", "com.tw", "co.kr", "com.sg"})


class DomainTable:
    def __init__(self, catalog: BrandCatalog, domains: Sequence[DomainClass]):
        self.classes: dict[str, tuple[str, str | None]] = {d.domain: (d.kind, None) for d in domains}
        for brand in catalog.brands:  # a brand's own site outranks the table (its own blog on medium.com)
            for domain in brand.domains:
                self.classes[domain.lower().removeprefix("www.")] = (OWN, brand.name)
        self.classify = lru_cache(maxsize=65536)(self._classify)

    def _classify(self, url: str) -> tuple[str, str, str | None] | None:
        """(domain, class, own brand) of a URL; None when it has no host."""
        try:
            host = (urlsplit(url).hostname or "").lower().removeprefix("www.")
        except ValueError:
            return None
        if not host:
            return None
        labels = host.split(".")
        for start in range(len(labels)):
            candidate = ".".join(labels[start:])
            if candidate in self.classes:
                kind, brand = self.classes[candidate]
                return candidate, kind, brand
        return registrable(labels), OTHER, None


def registrable(labels: list[str]) -> str:
    keep = 3 if len(labels) >= 3 and ".".join(labels[-2:]) in SECOND_LEVEL else 2
    return ".".join(labels[-keep:])
