"""What each simulated platform says, in its own dialect.

The collector's adapters (collect/dialects/) build a platform's request and read its
response; this module is the other side: how a platform reads the request (is web search or
thinking switched on, is it the second round of Kimi's tool loop) and how it shapes its
answer, its sources, its usage, its moderation, billing and rate-limit errors and its
rate-limit headers. Field names, status codes and error bodies follow the documented shapes
in tests/fixtures/dialects/<dialect>.json and NOTES-<dialect>.md; where a platform documents
nothing (a compat error body, a header) the shape is the plain OpenAI one.

server.py decides what happens to a request (limits, faults, the tool loop); this module
only says how it looks.
"""

from __future__ import annotations

from .base import (
    BOT_PATH_SUFFIX,
    CHAT_PATH_SUFFIX,
    Ask,
    BadRequest,
    Completion,
    ErrorReply,
    SimDialect,
    dialect_name,
    hidden_reasoning_tokens,
    reasoning_for,
    tokens,
)
from .deepseek import DeepSeek
from .doubao import Doubao
from .ernie import Ernie
from .hunyuan import Hunyuan
from .kimi import Kimi
from .openai import OpenAI
from .perplexity import Perplexity
from .qwen import Qwen
from .sources import draw_sources

SIM_DIALECTS: dict[str, SimDialect] = {d.name: d for d in (OpenAI(), DeepSeek(), Qwen(), Ernie(), Hunyuan(), Doubao(),
                                                          Kimi(), Perplexity())}

__all__ = ["BOT_PATH_SUFFIX", "CHAT_PATH_SUFFIX", "SIM_DIALECTS", "Ask", "BadRequest", "Completion", "ErrorReply",
           "SimDialect", "dialect_name", "draw_sources", "hidden_reasoning_tokens", "reasoning_for", "tokens"]
