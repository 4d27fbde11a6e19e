"""Being told to stop: Ctrl-C (SIGINT), a `kill` (SIGTERM) or the terminal closing (SIGHUP).

A collection that is told to stop stores what it has and ends its run as failed, at once,
rather than at the end of the step (Dagster, left alone, only notices a signal between steps,
and a collection is one step of minutes). Whoever is sending registers a callback with
`on_stop`; the process's handler calls each one, from the main thread (where Python runs
handlers), and records the signal, so that a command can say what stopped it and exit with
128 + the signal's number.

SIGKILL cannot be caught: a run whose process died that way is found by the next command
that looks (runs.py, reap_dead_runs), by the pid its RUN_START event carries.
"""

from __future__ import annotations

import signal
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager

STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)

_callbacks: list[Callable[[int], None]] = []
_received: list[int] = []
_lock = threading.Lock()


class Interrupted(KeyboardInterrupt):
    """Raised where a command's main thread waits, when a stop signal arrives (Dagster treats a
    KeyboardInterrupt as an interruption, not as a failure of its own)."""

    def __init__(self, signum: int):
        super().__init__(f"interrupted by {signal_name(signum)}")
        self.signum = signum


def signal_name(signum: int) -> str:
    return signal.Signals(signum).name


def exit_code(signum: int) -> int:
    return 128 + signum


def received() -> int | None:
    """The first stop signal this process received, if any."""
    return _received[0] if _received else None


def count() -> int:
    """How many stop signals this process received (a second one: stop now)."""
    return len(_received)


def _dispatch(signum: int, frame) -> None:
    _received.append(signum)
    with _lock:
        callbacks = list(_callbacks)
    for callback in callbacks:
        callback(signum)


@contextmanager
def on_stop(callback: Callable[[int], None]) -> Iterator[None]:
    """Call `callback(signum)` while inside, when a stop signal arrives. On the main thread this
    takes the signals over (Dagster's own handlers, if any, come back on leaving); on another
    thread it is called only if the main thread handles them here (`handling_stop_signals`)."""
    installed: dict[int, object] = {}
    if threading.current_thread() is threading.main_thread():
        for signum in STOP_SIGNALS:
            previous = signal.getsignal(signum)
            if previous is not _dispatch:
                installed[signum] = previous
                signal.signal(signum, _dispatch)
    with _lock:
        _callbacks.append(callback)
    try:
        yield
    finally:
        with _lock:
            _callbacks.remove(callback)
        for signum, previous in installed.items():
            signal.signal(signum, previous)


@contextmanager
def handling_stop_signals() -> Iterator[None]:
    """For a command's main thread, while a run works in another thread: a stop signal is
    recorded and handed to whoever registered (the collector stops and stores what it has)."""
    with on_stop(lambda signum: None):
        yield
