"""`visibility backfill`: re-analyse history after brands.yaml changed, one single run per
platform (operate/runs.py, run_backfill); asks no platform anything."""

from __future__ import annotations

from visibility_assets.cli.arguments import UserError, collectable, config_of, iso_date
from visibility_assets.core.days import yesterday


def add_parser(commands) -> None:
    backfill = commands.add_parser("backfill", help="re-analyse history (after an alias change); asks no platform")
    backfill.add_argument("--since", type=iso_date, required=True, help="first day, YYYY-MM-DD")
    backfill.add_argument("--until", type=iso_date, help="last day (default: yesterday, Asia/Shanghai)")
    backfill.add_argument("--platform", action="append", help="only this platform (repeatable; default: all)")
    backfill.set_defaults(handler=run)


def run(args) -> int:
    config = config_of(args)
    until = args.until or yesterday()
    if args.since > until:
        raise UserError(f"--since {args.since} is after --until {until}")
    collectable(args.since, until, "--since and --until:")
    platforms = args.platform or config.platform_names
    for name in platforms:
        config.platform(name)  # unknown platform: an error naming the known ones
    from visibility_assets.runs import run_backfill

    return run_backfill(config, args.since, until, platforms)
