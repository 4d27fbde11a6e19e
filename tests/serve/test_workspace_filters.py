"""A view's filters from its URL: the defaults a brand manager lands on, and the errors a typo
gets."""

from datetime import date

import pytest

from visibility_assets.config import load_config
from visibility_assets.serve.filters import FilterError, parse_filters

PLATFORMS = ["deepseek", "kimi"]


def test_the_defaults_are_the_first_own_brand_and_the_last_week_against_the_one_before():
    catalog = load_config().catalog
    filters = parse_filters({}, catalog, date(2026, 11, 30), PLATFORMS)
    assert (filters.brand, filters.category) == ("阿里云", "cloud")  # own: true in the example
    assert (filters.start, filters.end, filters.platforms) == (date(2026, 11, 24), date(2026, 11, 30), ())
    assert filters.previous == (date(2026, 11, 17), date(2026, 11, 23))


def test_a_category_alone_opens_on_its_first_brand_and_a_link_reproduces_the_view():
    catalog = load_config().catalog
    filters = parse_filters({"category": "crm", "platform": "kimi", "from": "2026-11-01", "to": "2026-11-30"},
                            catalog, date(2026, 11, 30), PLATFORMS)
    assert filters.category == "crm" and filters.brand == catalog.for_category("crm")[0].name
    again = parse_filters(dict(pair.split("=") for pair in filters.query().split("&")) | {"brand": filters.brand},
                          catalog, date(2026, 11, 30), PLATFORMS)
    assert again == filters


@pytest.mark.parametrize("query, message", [
    ({"brand": "阿里云", "category": "crm"}, "unknown brand '阿里云' in category 'crm'"),
    ({"category": "toys"}, "unknown category 'toys'"),
    ({"platform": "kimi,grok"}, "unknown platform 'grok'"),
    ({"from": "2025-01-01", "to": "2026-11-30"}, "at most 366 days"),
    ({"to": "30/11/2026"}, "to: not a date"),
])
def test_a_filter_naming_nothing_is_an_error_that_says_which(query, message):
    with pytest.raises(FilterError, match=message):
        parse_filters(query, load_config().catalog, date(2026, 11, 30), PLATFORMS)
