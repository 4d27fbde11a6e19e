"""`visibility backfill`: re-analyse history after brands.yaml changed, one single run per platform.

catalog_job runs first (so the new config version is recorded), then for each platform one
run of reanalysis_job over its date range re-materializes cleaned_samples and everything
downstream. raw_ai_responses is not in that job: a backfill asks no platform anything.
"""

from __future__ import annotations

import sys
from datetime import date

from ..config import VisibilityConfig
from ..days import yesterday
from .arguments import UserError, config_of, iso_date


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
    platforms = args.platform or config.platform_names
    for name in platforms:
        config.platform(name)  # unknown platform: an error naming the known ones
    return run_backfill(config, args.since, until, platforms)


def run_backfill(config: VisibilityConfig, since: date, until: date, platforms: list[str], out=sys.stdout) -> int:
    from ..definitions import build_definitions
    from ..defs.automation import backfill_tags, catalog_job, reanalysis_job
    from ..instance import get_instance, planned_events_as_subsets
    from .partition_runs import materialization_metadata, run_job

    defs = build_definitions(config)
    instance = get_instance()
    catalog = run_job(defs, catalog_job.name, instance)
    if not catalog.success:
        print("brand_catalog failed to load; nothing re-analysed", file=out)
        return 1
    version = catalog.asset_materializations_for_node("brand_catalog")[0].tags.get("dagster/data_version")
    print(f"brand catalog {version}: re-analysing {since} .. {until} for {', '.join(platforms)}", file=out, flush=True)
    failures = 0
    with planned_events_as_subsets():  # one planned event per asset, not per partition
        for platform in platforms:
            result = run_job(defs, reanalysis_job.name, instance, tags=backfill_tags(since, until, platform))
            samples = materialization_metadata(result).get("cleaned_samples", {}).get("samples", 0)
            failures += not result.success
            print(f"  {platform:<10} {'ok' if result.success else 'FAILED'}: {samples} samples re-analysed"
                  f" (run {result.run_id})", file=out, flush=True)
    return 1 if failures else 0
