"""The YAML configuration: brands, questions, platforms and prices (docs/configuration.md)."""

from visibility_assets.config.loading import (
    BRANDS_FILE,
    CONFIG_DIR_ENV,
    EXAMPLE_CONFIG_DIR,
    PLATFORMS_FILE,
    PRICES_FILE,
    QUESTIONS_FILE,
    load_catalog,
    load_config,
    resolve_config_dir,
)
from visibility_assets.config.schema import (
    DIALECTS,
    Brand,
    BrandCatalog,
    ConfigError,
    DomainClass,
    MissingApiKey,
    Platform,
    Price,
    Question,
    UnknownPlatform,
    VisibilityConfig,
    normalize_alias,
)

__all__ = [
    "BRANDS_FILE", "CONFIG_DIR_ENV", "DIALECTS", "EXAMPLE_CONFIG_DIR", "PLATFORMS_FILE", "PRICES_FILE",
    "QUESTIONS_FILE", "Brand", "BrandCatalog", "ConfigError", "DomainClass", "MissingApiKey", "Platform", "Price", "Question",
    "UnknownPlatform", "VisibilityConfig", "load_catalog", "load_config", "normalize_alias", "resolve_config_dir",
]
