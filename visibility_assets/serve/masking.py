"""A view's data as a viewer may read it: every string with its personal data masked
(core/personal_data.py). Only an analyst or admin reads the verbatim text."""

from __future__ import annotations

from dataclasses import replace

from visibility_assets.core.personal_data import mask
from visibility_assets.serve.views.grid import Grid


def masked(value):
    """Every string inside the value (dicts, lists, tuples, a table's rows) masked."""
    if isinstance(value, str):
        return mask(value)
    if isinstance(value, Grid):
        return replace(value, rows=tuple(masked(row) for row in value.rows))
    if isinstance(value, dict):
        return {key: masked(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return type(value)(masked(item) for item in value)
    return value
