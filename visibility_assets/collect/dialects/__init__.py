"""One adapter per platform dialect: the request body the platform expects, and its response
read into one normalized answer. Adding a platform is adding a module here and its fixtures
(tests/fixtures/dialects/)."""

from ...config import Platform
from .answer import ANSWERED, MODERATED, PLATFORM, TEXT, TRUNCATED, Citation, NormalizedAnswer, Usage
from .base import Dialect, DialectError, UnsupportedSetting
from .deepseek import DeepSeek
from .doubao import Doubao
from .ernie import Ernie
from .hunyuan import Hunyuan
from .kimi import Kimi
from .openai import OpenAI
from .perplexity import Perplexity
from .qwen import Qwen

DIALECTS: dict[str, Dialect] = {d.name: d for d in (OpenAI(), DeepSeek(), Qwen(), Ernie(), Hunyuan(), Doubao(),
                                                   Kimi(), Perplexity())}


def dialect_of(platform: Platform) -> Dialect:
    return DIALECTS[platform.dialect]


__all__ = ["ANSWERED", "DIALECTS", "MODERATED", "PLATFORM", "TEXT", "TRUNCATED", "Citation", "Dialect", "DialectError",
           "NormalizedAnswer", "UnsupportedSetting", "Usage", "dialect_of"]
