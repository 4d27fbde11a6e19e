"""`visibility demo`: the whole pipeline for a day against the simulated platforms (tools/demo.py)."""

from __future__ import annotations

from datetime import date as Date
from datetime import timedelta

from visibility_assets.cli.arguments import UserError, collectable, config_of, iso_date, positive_int
from visibility_assets.core.days import yesterday
from visibility_assets.tools.demo import run_demo

# A year of nights and a day: longer histories are what `visibility bench history` writes.
MAX_DAYS = 366


def add_parser(commands) -> None:
    demo = commands.add_parser("demo", help="run the pipeline for a day against the simulated platforms")
    demo.add_argument("--date", type=iso_date, help="the (last) day to collect, YYYY-MM-DD (default: yesterday, Asia/Shanghai)")
    demo.add_argument("--days", type=positive_int, default=1,
                      help=f"collect the N days ending at --date (at most {MAX_DAYS})")
    demo.set_defaults(handler=run)


def run(args) -> int:
    config = config_of(args)  # validate before anything is started or written
    if args.days > MAX_DAYS:
        raise UserError(f"--days {args.days}: at most {MAX_DAYS} days at once")
    last = args.date or yesterday()
    dates = demo_dates(last, args.days)
    collectable(Date.fromisoformat(dates[0]), last, "--date" if args.days == 1 else "--date and --days:")
    return run_demo(config, dates, started=args.started)


def demo_dates(end: Date, days: int) -> list[str]:
    return [(end - timedelta(days=offset)).isoformat() for offset in range(days - 1, -1, -1)]
