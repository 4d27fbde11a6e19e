"""A file written whole or not at all: to a temporary file beside it, then renamed over it, so
that a failure (a full disk, a kill) never leaves half a file where a reader looks."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path


def write_whole(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.NamedTemporaryFile("w", encoding="utf-8", dir=path.parent, delete=False, suffix=".tmp") as part:
        try:
            part.write(text)
        except BaseException:
            part.close()
            os.unlink(part.name)
            raise
    try:
        os.replace(part.name, path)
    except BaseException:
        os.unlink(part.name)
        raise
