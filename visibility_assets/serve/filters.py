"""What a view shows, from its URL: the brand, the category, the date range, the platforms and
an `as_of` snapshot. The same parameters drive the page, its JSON and its CSV, so a link
reproduces a view. Values reach SQL only as bound parameters."""

from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import date, timedelta
from urllib.parse import urlencode

from visibility_assets.config import BrandCatalog
from visibility_assets.config.schema import PLATFORM_NAME

DEFAULT_DAYS = 7  # a week against the week before, the way brand teams read their numbers
MAX_DAYS = 366


class FilterError(ValueError):
    """A query parameter that names nothing or cannot be read; shown to the user as it is."""


@dataclass(frozen=True)
class Filters:
    brand: str
    category: str
    start: date
    end: date
    platforms: tuple[str, ...]  # empty: every platform
    as_of: str | None = None

    @property
    def days(self) -> int:
        return (self.end - self.start).days + 1

    @property
    def previous(self) -> tuple[date, date]:
        """The period of equal length just before this one: what a change is measured against."""
        return self.start - timedelta(days=self.days), self.start - timedelta(days=1)

    def params(self, *names: str) -> dict:
        """The bound parameters of a view's SQL: those named (DuckDB refuses one a statement
        does not use), or all."""
        before, after = self.previous
        values = {"brand": self.brand, "category": self.category, "start": self.start, "end": self.end,
                  "previous_start": before, "previous_end": after, "platforms": list(self.platforms)}
        return {name: values[name] for name in names} if names else values

    def query(self, **changes) -> str:
        """The URL query of these filters, with `changes` (None removes a key)."""
        return urlencode(self.items(**changes))

    def items(self, **changes) -> list[tuple[str, str]]:
        """The URL query's pairs, for a form's hidden fields."""
        values = {"brand": self.brand, "category": self.category, "from": self.start.isoformat(),
                  "to": self.end.isoformat(), "platform": ",".join(self.platforms) or None, "as_of": self.as_of}
        values.update(changes)
        return [(k, str(v)) for k, v in values.items() if v is not None]

    def with_brand(self, brand: str, category: str) -> Filters:
        return replace(self, brand=brand, category=category)

    def as_json(self) -> dict:
        return {"brand": self.brand, "category": self.category, "from": self.start.isoformat(),
                "to": self.end.isoformat(), "platforms": list(self.platforms), "as_of": self.as_of,
                "previous": {"from": self.previous[0].isoformat(), "to": self.previous[1].isoformat()}}


def parse_filters(query: dict[str, str], catalog: BrandCatalog, latest: date | None,
                  platforms: list[str], default_days: int = DEFAULT_DAYS) -> Filters:
    """Filters from a URL's parameters, with defaults: the first own brand (else the first
    brand), its category, the `default_days` days ending at the latest day measured, every
    platform."""
    brand = find_brand(query.get("brand"), query.get("category"), catalog)
    end = _day(query, "to") or latest or date.today()
    start = _day(query, "from") or end - timedelta(days=default_days - 1)
    if start > end:
        raise FilterError(f"from {start} is after to {end}")
    if (end - start).days + 1 > MAX_DAYS:
        raise FilterError(f"a view covers at most {MAX_DAYS} days")
    chosen = tuple(dict.fromkeys(p.strip() for p in query.get("platform", "").split(",") if p.strip()))
    unknown = [p for p in chosen if p not in platforms or not PLATFORM_NAME.match(p)]
    if unknown:
        raise FilterError(f"unknown platform {unknown[0]!r} (known: {', '.join(platforms) or 'none yet'})")
    as_of = query.get("as_of", "").strip() or None  # checked and resolved by the reader
    return Filters(brand.name, brand.category, start, end, chosen, as_of)


def find_brand(name: str | None, category: str | None, catalog: BrandCatalog):
    if category is not None and category not in catalog.categories:
        raise FilterError(f"unknown category {category!r}")
    if name:
        matches = [b for b in catalog.brands if b.name == name and (category is None or b.category == category)]
        if not matches:
            raise FilterError(f"unknown brand {name!r}" + (f" in category {category!r}" if category else ""))
        return matches[0]
    candidates = [b for b in catalog.brands if category is None or b.category == category]
    if not candidates:
        raise FilterError("the brand catalog is empty")
    return next((b for b in candidates if b.own), candidates[0])


def _day(query: dict[str, str], key: str) -> date | None:
    text = query.get(key, "").strip()
    if not text:
        return None
    try:
        return date.fromisoformat(text)
    except ValueError:
        raise FilterError(f"{key}: not a date (YYYY-MM-DD): {text[:40]!r}") from None
