"""A user's open client: one read-only connection held for the whole test, querying in a loop.

Every read checks that each partition is whole: its rows all come from one run, and a raw or
cleaned partition holds either none or all of its answers. Prints one JSON line of figures
when the file named by argv[1] appears.
"""

import json
import sys
import time
from pathlib import Path

import duckdb

from visibility_assets.warehouse.lake import lake_settings, open_reader

PARTITIONS = """
SELECT platform, count(*) AS rows, count(DISTINCT run_id) AS runs FROM {table}
WHERE date = $date GROUP BY platform
"""
WHOLE_TABLES = ("raw_ai_responses", "cleaned_samples")  # a partition holds 0 or `answers` rows
ONE_RUN_TABLES = WHOLE_TABLES + ("mention_metrics",)


def main(stop_file: str, date: str, answers: int) -> None:
    conn = open_reader(lake_settings())
    reads = torn = missing = errors = 0
    first_error = None
    while not Path(stop_file).exists():
        for table in ONE_RUN_TABLES:
            try:
                rows = conn.execute(PARTITIONS.replace("{table}", table), {"date": date}).fetchall()
            except duckdb.CatalogException:
                missing += 1  # not created yet by the first run
                continue
            except duckdb.Error as exc:
                errors += 1
                first_error = first_error or str(exc)
                continue
            reads += 1
            for _, count, runs in rows:
                if runs > 1 or (table in WHOLE_TABLES and count not in (0, answers)):
                    torn += 1
        time.sleep(0.01)
    conn.close()
    print(json.dumps({"reads": reads, "torn": torn, "errors": errors, "missing_table_reads": missing,
                      "first_error": first_error}))


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2], int(sys.argv[3]))
