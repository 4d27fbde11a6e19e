"""`visibility bench ...`: benchmarks that print one JSON object on their last stdout line."""

import os
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import date

LAST_DAY = date(2026, 10, 31)  # the last day of the synthetic history the benchmarks build


@contextmanager
def scratch_home(prefix: str) -> Iterator[str]:
    """A throwaway data directory (and its Dagster home) for the duration of a benchmark."""
    with tempfile.TemporaryDirectory(prefix=prefix) as scratch:
        os.environ["VISIBILITY_HOME"] = scratch
        os.environ.pop("DAGSTER_HOME", None)
        yield scratch
