"""`visibility aliases`: how each alias of brands.yaml fares: the warnings its load gives (common
words, single Chinese characters, other categories' brands) and, over the last days of stored
answers, how often it matched, how often a context rule rejected the match, and by which rule."""

from __future__ import annotations

from datetime import timedelta

from visibility_assets.cli.arguments import config_of, positive_int
from visibility_assets.cli.lake_reader import read_warehouse
from visibility_assets.cli.sql import table
from visibility_assets.config.alias_lint import alias_warnings
from visibility_assets.core.days import yesterday

MATCHES = """
SELECT brand_category AS category, brand, alias, count(*) AS matches,
       count(*) FILTER (accepted) AS accepted, count(*) FILTER (NOT accepted) AS rejected,
       count(DISTINCT date) AS days,
       string_agg(DISTINCT rule, ', ' ORDER BY rule) FILTER (NOT accepted) AS rejected_by
FROM entity_matches
WHERE date BETWEEN $since AND $until
GROUP BY ALL
ORDER BY matches DESC, category, brand, alias
"""


def add_parser(commands) -> None:
    aliases = commands.add_parser("aliases", help="each alias's warnings, and its matches over the last days")
    aliases.add_argument("--days", type=positive_int, default=7, help="days of stored answers, up to yesterday (7)")
    aliases.set_defaults(handler=run)


def run(args) -> int:
    config = config_of(args, warn=False)  # the warnings are this command's output, not a side note
    warnings = alias_warnings(config.directory)
    print(f"{len(warnings)} alias warning{'s' if len(warnings) != 1 else ''} in {config.directory / 'brands.yaml'}")
    for warning in warnings:
        print(f"  {warning}")
    until = yesterday()
    since = until - timedelta(days=args.days - 1)
    with read_warehouse() as conn:
        cursor = conn.execute(MATCHES, {"since": since, "until": until})
        columns, rows = [d[0] for d in cursor.description], cursor.fetchall()
    print(f"\nmatches of each alias in the answers of {since} .. {until}, the most first:")
    print(table(columns, rows))
    return 0
