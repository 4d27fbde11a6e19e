"""`visibility demo`: the whole pipeline for a day against the simulated platforms (tools/demo.py)."""

from __future__ import annotations

from datetime import date as Date
from datetime import timedelta

from visibility_assets.cli.arguments import UserError, config_of, iso_date, positive_int
from visibility_assets.core.days import yesterday
from visibility_assets.tools.demo import run_demo


def add_parser(commands) -> None:
    demo = commands.add_parser("demo", help="run the pipeline for a day against the simulated platforms")
    demo.add_argument("--date", type=iso_date, help="the (last) day to collect, YYYY-MM-DD (default: yesterday, Asia/Shanghai)")
    demo.add_argument("--days", type=positive_int, default=1, help="collect the N days ending at --date")
    demo.set_defaults(handler=run)


def run(args) -> int:
    config = config_of(args)  # validate before anything is started or written
    last = yesterday()
    if args.date and args.date > last:  # the day partitions end yesterday: today is still being asked
        raise UserError(f"--date {args.date.isoformat()}: the last day that can be collected is"
                        f" {last.isoformat()} (yesterday, Asia/Shanghai)")
    return run_demo(config, demo_dates(args.date or last, args.days))


def demo_dates(end: Date, days: int) -> list[str]:
    return [(end - timedelta(days=offset)).isoformat() for offset in range(days - 1, -1, -1)]
