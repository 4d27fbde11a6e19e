"""`visibility backfill`: re-analyse history after brands.yaml changed, one single run per platform.

brand_catalog is materialized first (so the new config version is recorded), then for each
platform one run over its date range re-materializes cleaned_samples and everything
downstream. raw_ai_responses is never selected: a backfill asks no platform anything.
"""

from __future__ import annotations

import sys
from datetime import date

from dagster import materialize

from ..definitions import defs, resources
from ..instance import get_instance, planned_events_as_subsets
from ..defs.automation import backfill_tags, reanalysis_keys
from .partition_runs import QUIET_RUN


def run_backfill(since: date, until: date, platforms: list[str], out=sys.stdout) -> int:
    instance = get_instance()
    assets = list(defs.assets)
    catalog = materialize(assets, selection=["brand_catalog"], instance=instance, resources=resources(),
                          run_config=QUIET_RUN, raise_on_error=False)
    if not catalog.success:
        print("brand_catalog failed to load; nothing re-analysed", file=out)
        return 1
    version = catalog.asset_materializations_for_node("brand_catalog")[0].tags.get("dagster/data_version")
    print(f"brand catalog {version}: re-analysing {since} .. {until} for {', '.join(platforms)}", file=out, flush=True)
    selection = reanalysis_keys()
    failures = 0
    with planned_events_as_subsets():  # one planned event per asset, not per partition
        for platform in platforms:
            result = materialize(assets, selection=selection, instance=instance, resources=resources(),
                                 tags=backfill_tags(since, until, platform), run_config=QUIET_RUN,
                                 raise_on_error=False)
            samples = next((e.materialization.metadata["samples"].value
                            for e in result.get_asset_materialization_events()
                            if e.asset_key.to_user_string() == "cleaned_samples"
                            and "samples" in e.materialization.metadata), 0)
            failures += not result.success
            print(f"  {platform:<10} {'ok' if result.success else 'FAILED'}: {samples} samples re-analysed"
                  f" (run {result.run_id})", file=out, flush=True)
    return 1 if failures else 0
