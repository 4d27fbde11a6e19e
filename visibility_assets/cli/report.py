"""`visibility report`: the HTML report of any period (a week, a month, a quarter), the nightly
report's sections with the key figures of the brands asked for, pooled over the period."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

from visibility_assets.cli.arguments import UserError, config_of, iso_date
from visibility_assets.cli.lake_reader import read_warehouse
from visibility_assets.core.faults import writing
from visibility_assets.core.paths import data_dir
from visibility_assets.core.personal_data import mask
from visibility_assets.core.whole_file import write_whole
from visibility_assets.measure.project import load_project
from visibility_assets.measure.runner import create_macros
from visibility_assets.report.html import latest_date, render_report
from visibility_assets.review.store import ReviewStore

MAX_DAYS = 366


def add_parser(commands) -> None:
    report = commands.add_parser("report", help="write the HTML report of a period")
    report.add_argument("--from", dest="start", type=iso_date, help="the first day (default: --to)")
    report.add_argument("--to", dest="end", type=iso_date, help="the last day (default: the latest measured)")
    report.add_argument("--brand", action="append", default=[],
                        help="a brand whose key figures to show (repeatable; default: the own brands of brands.yaml)")
    report.add_argument("--platform", action="append", default=[], help="only these platforms (repeatable)")
    report.add_argument("--out", type=Path, help="the file to write (default: reports/ in the data directory)")
    report.set_defaults(handler=run)


def run(args) -> int:
    config = config_of(args, warn=False)
    for name in args.platform:
        config.platform(name)  # an unknown platform is an error naming the known ones
    brands = _brands(config.catalog.brands, args.brand)
    with read_warehouse() as conn:
        end = args.end or latest_date(conn)
        if end is None:
            raise UserError("mention_metrics is empty: run `visibility demo` or materialize partitions first")
        start = args.start or end
        if start > end:
            raise UserError(f"--from {start} is after --to {end}")
        if end - start >= timedelta(days=MAX_DAYS):
            raise UserError(f"a report covers at most {MAX_DAYS} days")
        create_macros(conn, load_project())  # the report's intervals are the models' own statistics
        reviews = ReviewStore.under(data_dir()).reviews()
        html = mask(render_report(conn, end, start, brands, args.platform, reviews))  # a file anyone may be sent
    period = end.isoformat() if start == end else f"{start.isoformat()}_{end.isoformat()}"
    path = args.out or data_dir() / "reports" / f"visibility_report_{period}.html"
    _write(path, html)
    print(path)
    return 0


def _brands(catalog, asked: list[str]) -> list[tuple[str, str]]:
    if not asked:
        return [(b.name, b.category) for b in catalog if b.own]
    known = {b.name: b.category for b in catalog}
    unknown = [name for name in asked if name not in known]
    if unknown:
        raise UserError(f"--brand {unknown[0]!r} is not in brands.yaml")
    return [(name, known[name]) for name in dict.fromkeys(asked)]


def _write(path: Path, html: str) -> None:
    if path.parent.exists() and not path.parent.is_dir():
        raise UserError(f"--out {path}: {path.parent} is not a folder")
    with writing("the report", path.parent):
        write_whole(path, html)
