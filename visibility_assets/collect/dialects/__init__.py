"""One adapter per platform dialect: the request body the platform expects, and its response
read into one normalized answer. Adding a platform is adding a module here and its fixtures
(tests/fixtures/dialects/), and its name to config's DIALECTS, the one list of dialects."""

from importlib import import_module

from visibility_assets.collect.dialects.base import Dialect, DialectError, UnsupportedSetting
from visibility_assets.config import DIALECTS as DIALECT_NAMES
from visibility_assets.config import Platform

# Each module of this folder holds one dialect as DIALECT, named as config's DIALECTS names it.
DIALECTS: dict[str, Dialect] = {name: import_module(f"{__name__}.{name}").DIALECT for name in DIALECT_NAMES}


def dialect_of(platform: Platform) -> Dialect:
    return DIALECTS[platform.dialect]


__all__ = ["DIALECTS", "Dialect", "DialectError", "UnsupportedSetting", "dialect_of"]
