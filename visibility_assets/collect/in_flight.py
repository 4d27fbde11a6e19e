"""Attempts in flight, written down as they are sent.

The journal stores attempts in checkpoints, every half second: a run killed between two of
them would lose the attempts it had sent since, and the ledger would count fewer requests than
the platform received (and billed). So each attempt is appended to this log the moment its
request's bytes are out (before any answer can come back), one line written straight to the
file (a killed process loses nothing the kernel has), and a run that
resumes the partition closes every logged attempt the journal lacks as `interrupted`.

The log is a local file under the data directory: a partition resumed on another machine
does not see the attempts a crash interrupted on the first one.
"""

from __future__ import annotations

import json
import os
from datetime import datetime
from pathlib import Path

from visibility_assets.collect.client import Attempt
from visibility_assets.core.faults import writing

INTERRUPTED = "interrupted"


class InFlightLog:
    def __init__(self, path: Path):
        self.path = path
        self._fd: int | None = None

    def sent(self, attempt: Attempt) -> None:
        """Called as the attempt's request goes out."""
        line = json.dumps({"request_key": attempt.request_key, "attempt": attempt.attempt,
                           "run_id": attempt.run_id, "started_at": attempt.started_at.isoformat()})
        with writing("the log of requests in flight", self.path):
            if self._fd is None:
                self.path.parent.mkdir(parents=True, exist_ok=True)
                self._fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
            os.write(self._fd, (line + "\n").encode())

    def interrupted(self, journaled: set[tuple[str, int]]) -> list[Attempt]:
        """The logged attempts the journal lacks, closed as interrupted (a crashed run's)."""
        if not self.path.exists():
            return []
        found: dict[tuple[str, int], Attempt] = {}
        for line in self.path.read_text(encoding="utf-8").splitlines():
            try:
                entry = json.loads(line)
            except ValueError:
                continue  # the line being written when the process died
            key = (entry["request_key"], entry["attempt"])
            if key in journaled or key in found:
                continue
            started = datetime.fromisoformat(entry["started_at"])
            # When it ended is unknown: it ends where it began, adding no time to its run.
            found[key] = Attempt(entry["request_key"], entry["attempt"], entry["run_id"], started, started, 0.0,
                                 error_class=INTERRUPTED,
                                 error_message="the run ended before this attempt's answer was stored")
        return list(found.values())

    def clear(self) -> None:
        """Every attempt logged so far is in the journal."""
        self.close()
        self.path.unlink(missing_ok=True)

    def close(self) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None
