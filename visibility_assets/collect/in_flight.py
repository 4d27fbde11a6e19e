"""Attempts in flight and answers received, written down as they happen.

The journal stores attempts and answers in checkpoints, every few seconds: a run killed between
two of them would lose what it had sent and received since, the ledger would count fewer
requests than the platform received (and billed), and the next run would pay again for answers
it had had. So each attempt is appended to this log as its request's body goes out (after
the connection and its headers, before any answer can come back), and each answer the moment
it arrives, one line written straight to the file (a killed process loses nothing the kernel
has). A run that resumes the partition stores the logged answers the journal lacks, then
closes every other logged attempt the journal lacks as `interrupted`.

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
        self._append({"request_key": attempt.request_key, "attempt": attempt.attempt,
                      "run_id": attempt.run_id, "started_at": attempt.started_at.isoformat()})

    def answered(self, attempt_row: list, answer_row: list) -> None:
        """Called as an answer arrives: its attempt's and its own journal rows (as JSON values)."""
        self._append({"answered": {"attempt": attempt_row, "answer": answer_row}})

    def answers(self) -> list[dict]:
        """The answers logged, each {"attempt": row, "answer": row}, in the order they came."""
        return [entry["answered"] for entry in self._entries() if "answered" in entry]

    def _append(self, entry: dict) -> None:
        data = (json.dumps(entry, ensure_ascii=False) + "\n").encode()
        with writing("the log of requests in flight", self.path):
            if self._fd is None:
                self._fd = self._open()
            while data:  # a nearly full disk takes part of a write, then refuses the rest
                data = data[os.write(self._fd, data):]

    def _open(self) -> int:
        """The log, opened to append; a line a dead process (or a full disk) left unfinished is
        ended first, so the next entry starts a line of its own."""
        self.path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(self.path, os.O_RDWR | os.O_APPEND | os.O_CREAT, 0o600)
        size = os.fstat(fd).st_size
        if size and os.pread(fd, 1, size - 1) != b"\n":
            os.write(fd, b"\n")
        return fd

    def _entries(self) -> list[dict]:
        if not self.path.exists():
            return []
        entries = []
        for line in self.path.read_bytes().splitlines():
            try:
                entries.append(json.loads(line.decode("utf-8")))
            except ValueError:  # UnicodeDecodeError is one
                continue  # a line cut short: the process died, or the disk filled, while writing it
        return entries

    def interrupted(self, journaled: set[tuple[str, int]]) -> list[Attempt]:
        """The logged attempts the journal lacks, closed as interrupted (a crashed run's)."""
        found: dict[tuple[str, int], Attempt] = {}
        for entry in self._entries():
            if "answered" in entry:
                continue
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
