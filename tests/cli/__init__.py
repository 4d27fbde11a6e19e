"""The `visibility` command run in the test's process: the parser, the handler and the error
handling a user's shell would see, without the seconds a new interpreter costs. A test that is
about the process itself (the installed script, signals, exit codes seen by the shell) starts
one instead."""

from __future__ import annotations

import io
from contextlib import redirect_stderr, redirect_stdout
from dataclasses import dataclass

from visibility_assets.cli.main import main


@dataclass
class Completed:
    returncode: int
    stdout: str
    stderr: str


def visibility(*args: str) -> Completed:
    """Exit code, stdout and stderr of `visibility ARGS`; an exception the command does not turn
    into a user error propagates (where a process would print its traceback)."""
    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        try:
            code = main(list(args))
        except SystemExit as exc:  # argparse: --help, or a bad argument
            code = exc.code if isinstance(exc.code, int) else 2
    return Completed(code, out.getvalue(), err.getvalue())
