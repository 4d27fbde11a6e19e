"""What every subcommand shares: argument types, the user-error exception, the config."""

from __future__ import annotations

import argparse
import sys
from datetime import date as Date

from visibility_assets.config import VisibilityConfig, load_config
from visibility_assets.core.days import DayOutOfRange, check_collectable


class UserError(Exception):
    """A problem with what the user asked for: printed without a traceback, exit 2."""


def iso_date(text: str) -> Date:
    try:
        return Date.fromisoformat(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a date (YYYY-MM-DD): {text!r}") from None


def positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be a positive integer: {text!r}")
    return value


def config_of(args: argparse.Namespace, warn: bool = True) -> VisibilityConfig:
    """The config named by --config-dir, $VISIBILITY_CONFIG_DIR or the shipped example, validated;
    with `warn`, the aliases that would match too much are said on stderr (config/alias_lint.py)."""
    config = load_config(args.config_dir)
    if warn:
        from visibility_assets.config.alias_lint import alias_warnings

        for warning in alias_warnings(config.directory):
            print(f"visibility {args.command}: warning: {warning}", file=sys.stderr)
    return config


def collectable(first: Date, last: Date, option: str) -> None:
    """Refuse, naming `option`, days outside the partitions (before the first, or not over yet)."""
    try:
        check_collectable(first, last)
    except DayOutOfRange as exc:
        raise UserError(f"{option} {exc}") from None
