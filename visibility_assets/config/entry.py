"""The base of every config entry: unknown keys are errors, values are frozen once loaded, and
numbers are strict and finite (`rounds: true` is no 1, `.inf` no rate)."""

from typing import Annotated

from pydantic import BaseModel, ConfigDict, Strict

# A whole number that must be written as one (not true, not "3", not 3.0).
Count = Annotated[int, Strict()]
# A number written as one (3 or 3.5, not "3" or true); every field that takes one gives its range.
Number = Annotated[float, Strict()]


class _Entry(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, str_strip_whitespace=True, allow_inf_nan=False)
