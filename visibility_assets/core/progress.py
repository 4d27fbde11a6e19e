"""What a long collection says while it works, for the person who started it.

Each message goes to the run's own log (the Dagster UI) and to the `visibility.progress`
logger; a command prints that logger's lines on its terminal: `visibility ask` every line
(counts and waits), the demo's workers only the waits (WARNING), since the demo prints a line
per platform when it ends. Nothing prints where no command asked for it (a daemon's run).
"""

from __future__ import annotations

import logging
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TextIO

PROGRESS = logging.getLogger("visibility.progress")
PROGRESS.propagate = False  # a command prints it; nothing else should
PROGRESS.setLevel(logging.INFO)


def say(run_log: Callable[[str], None], message: str, level: int = logging.INFO) -> None:
    """The message to the run's log and, at its level, to whoever prints progress."""
    run_log(message)
    PROGRESS.log(level, message)


@contextmanager
def printing_progress(stream: TextIO | None = None, level: int = logging.INFO) -> Iterator[None]:
    """Print progress lines of `level` and above on `stream` (a command's terminal) while inside."""
    handler = logging.StreamHandler(stream or sys.stdout)
    handler.setLevel(level)
    handler.setFormatter(logging.Formatter("%(asctime)s %(message)s", "%H:%M:%S"))
    PROGRESS.addHandler(handler)
    try:
        yield
    finally:
        PROGRESS.removeHandler(handler)
