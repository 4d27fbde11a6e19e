"""Text from brands.yaml or a platform's answer shown to a person: bidirectional control
characters (U+202E RIGHT-TO-LEFT OVERRIDE and its kin) are written as their escapes, so that a
name cannot reorder what is printed after it in the report or a terminal."""

from __future__ import annotations

import html
from typing import TextIO

BIDI_CONTROLS = "\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069"
_ESCAPES = {ord(c): f"\\u{ord(c):04x}" for c in BIDI_CONTROLS}


def visible(text: str) -> str:
    return text.translate(_ESCAPES)


def html_text(value: object) -> str:
    """HTML-escaped and with bidi controls visible: every text a report writes."""
    return html.escape(visible(str(value)))


class VisibleStream:
    """A text stream that writes bidi controls as escapes (the CLI's stdout and stderr); in JSON
    output the escape is the same character, so the output stays valid and means the same."""

    def __init__(self, stream: TextIO):
        self._stream = stream

    def write(self, text: str) -> int:
        return self._stream.write(visible(text))

    def __getattr__(self, name: str):
        return getattr(self._stream, name)
