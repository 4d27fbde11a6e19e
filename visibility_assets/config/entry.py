"""The base of every config entry: unknown keys are errors, values are frozen once loaded."""

from pydantic import BaseModel, ConfigDict


class _Entry(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, str_strip_whitespace=True)
