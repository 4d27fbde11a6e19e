"""The change tests' rule as the warehouse applies it (macros.sql: baseline_days, change_kept,
change_is_clear), read from the macros themselves so that the pages and the report that state
the rule in words state the thresholds the SQL uses, and a threshold lives in one file."""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from pathlib import Path

import duckdb

from visibility_assets.measure.project import PROJECT_DIR, load_project


@dataclass(frozen=True)
class ChangeRule:
    baseline_days: int  # a day is tested against this many days before it
    kept_p: float  # a change is kept (borderline at least) when p < kept_p
    clear_p: float  # and clear (an alert, notified) when also p < clear_p
    clear_q: float  # and its Benjamini-Hochberg q <= clear_q


@cache
def change_rule(root: Path = PROJECT_DIR) -> ChangeRule:
    with duckdb.connect() as conn:
        conn.execute(load_project(root).macros)
        days, kept_p, clear_p, clear_q = conn.execute(
            "SELECT baseline_days(), change_kept_p(), change_clear_p(), change_clear_q()").fetchone()
    return ChangeRule(int(days), float(kept_p), float(clear_p), float(clear_q))
