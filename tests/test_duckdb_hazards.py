"""What the pinned DuckDB (1.4) gets wrong, kept out of every statement the package runs.

A window over every row (`count(*) OVER ()`, `max(x) OVER ()`) races in DuckDB's parallel window
execution (duckdb/duckdb#22846, #25713): now and then an internal error, after which the
database is invalidated until the process restarts. The workspace's answers page met it about
once in 300 requests at 5,000 brands; the total of a page is a scalar subquery instead."""

from __future__ import annotations

import re
from pathlib import Path

import visibility_assets
from visibility_assets.measure.project import PROJECT_DIR

PACKAGE = Path(visibility_assets.__file__).parent
WHOLE_RESULT_WINDOW = re.compile(r"\bOVER\s*\(\s*\)", re.IGNORECASE)


def windows_over_every_row(text: str) -> list[str]:
    return [line.strip() for line in text.splitlines() if WHOLE_RESULT_WINDOW.search(line)]


def test_the_check_finds_a_window_over_every_row_however_it_is_spelt():
    assert windows_over_every_row("SELECT count(*) OVER () AS n,\n max(x) over( ) AS m, row_number() OVER (ORDER BY x)")\
        == ["SELECT count(*) OVER () AS n,", "max(x) over( ) AS m, row_number() OVER (ORDER BY x)"]
    assert windows_over_every_row("count(*) OVER (PARTITION BY date)") == []


def test_no_statement_of_the_package_or_its_models_uses_a_window_over_every_row():
    files = [*PACKAGE.rglob("*.py"), *PROJECT_DIR.rglob("*.sql")]
    found = {str(path.relative_to(PACKAGE.parent)): lines for path in files
             if (lines := windows_over_every_row(path.read_text(encoding="utf-8")))}
    assert len(files) > 100 and found == {}
