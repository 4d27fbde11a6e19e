"""Where the SQL project lives, and the error any of its files (models, their YAML, the metric
catalog) raises: the modules reading them import these, not each other."""

from __future__ import annotations

from pathlib import Path

PROJECT_DIR = Path(__file__).parent / "dbt_like_sql"  # a link to the top-level dbt_like_sql/


class ModelError(Exception):
    """The SQL project cannot be loaded; the message names the file."""
