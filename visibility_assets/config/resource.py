"""The config as a Dagster resource: the folder the definitions were built from, loaded on demand."""

from dagster import ConfigurableResource
from pydantic import Field

from visibility_assets.config.loading import load_config
from visibility_assets.config.schema import MAX_ANSWER_CHARS, VisibilityConfig


class VisibilityConfigResource(ConfigurableResource):
    """The config folder (brands.yaml, questions.yaml, platforms.yaml and the optional files)."""

    config_dir: str
    # Answers longer than this are analysed only up to it (cleaned_samples.analysis_capped), so
    # that one runaway answer cannot stall a partition's cleaning.
    max_answer_chars: int = Field(default=MAX_ANSWER_CHARS, ge=1_000, le=10_000_000)

    def load(self) -> VisibilityConfig:
        return load_config(self.config_dir)
