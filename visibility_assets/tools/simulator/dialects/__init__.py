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

from importlib import import_module

from visibility_assets.config import DIALECTS as DIALECT_NAMES
from visibility_assets.tools.simulator.dialects.base import (
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
from visibility_assets.tools.simulator.dialects.sources import draw_sources

# Each module of this folder holds one dialect as DIALECT, named as config's DIALECTS names it.
SIM_DIALECTS: dict[str, SimDialect] = {name: import_module(f"{__name__}.{name}").DIALECT for name in DIALECT_NAMES}

__all__ = ["BOT_PATH_SUFFIX", "CHAT_PATH_SUFFIX", "SIM_DIALECTS", "Ask", "BadRequest", "Completion", "ErrorReply",
           "SimDialect", "dialect_name", "draw_sources", "hidden_reasoning_tokens", "reasoning_for", "tokens"]
