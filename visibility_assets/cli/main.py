"""The `visibility` command: one module per subcommand, each adding its parser here.

The subcommands are imported when the parser is built, not with this module: a command that runs
partitions in worker processes starts their server first, and the server's imports (the
pipeline's) then overlap this process's own."""

from __future__ import annotations

import argparse
import sys
import time
import warnings

# The commands whose partitions run in worker processes (tools/demo.py).
RUNS_WORKERS = ("demo",)


def build_parser() -> argparse.ArgumentParser:
    from visibility_assets.cli import (
        aliases,
        analyze,
        ask,
        backfill,
        bench,
        demo,
        digest,
        explain,
        judge,
        mcp,
        plan,
        replay,
        report,
        serve,
        share,
        simulate,
        sql,
        users,
        warehouse,
    )
    from visibility_assets.config import CONFIG_DIR_ENV

    parser = argparse.ArgumentParser(prog="visibility", description="Brand AI-visibility pipeline.")
    parser.add_argument("--config-dir", help="the config folder (brands.yaml, questions.yaml, platforms.yaml, ...)"
                        f" (default: ${CONFIG_DIR_ENV} or the shipped example)")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for module in (demo, simulate, ask, backfill, explain, report, replay, judge, sql, warehouse, analyze, aliases,
                   serve, mcp, plan, share, digest, users, bench):
        module.add_parser(commands)
    return parser


def main(argv: list[str] | None = None) -> int:
    started = time.monotonic()  # what a command reports as its wall time counts from here
    argv = sys.argv[1:] if argv is None else argv
    if runs_workers(argv):
        from visibility_assets.worker_server import start_worker_server

        start_worker_server()
    from visibility_assets.cli.arguments import UserError
    from visibility_assets.config import ConfigError, MissingApiKey, UnknownPlatform
    from visibility_assets.core.faults import as_disk_full
    from visibility_assets.core.visible_text import VisibleStream
    from visibility_assets.tools.simulator.launch import SimulatorPortBusy

    # Dagster marks backfill_policy and friends as beta on every import; not news to a user.
    warnings.filterwarnings("ignore", message=r".*is currently in (beta|preview).*")
    args = build_parser().parse_args(argv)
    args.started = started
    # Brand names and answers reach the terminal: a bidi control in them must not reorder it.
    streams = sys.stdout, sys.stderr
    sys.stdout, sys.stderr = VisibleStream(sys.stdout), VisibleStream(sys.stderr)
    try:
        return args.handler(args)
    except (UserError, ConfigError, MissingApiKey, UnknownPlatform, SimulatorPortBusy) as exc:
        print(f"visibility {args.command}: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
    except Exception as exc:
        full = as_disk_full(exc)  # a full disk is the user's to fix: one line, no traceback
        if full is None:
            raise
        print(f"visibility {args.command}: error: {full}", file=sys.stderr)
        return 1
    finally:
        sys.stdout, sys.stderr = streams


def runs_workers(argv: list[str]) -> bool:
    """Whether the command line runs partitions in worker processes (not only asks for its help)."""
    return _command_of(argv) in RUNS_WORKERS and not {"-h", "--help"} & set(argv)


def _command_of(argv: list[str]) -> str | None:
    """The subcommand named on the command line, without the subcommands' parsers."""
    peek = argparse.ArgumentParser(add_help=False)
    peek.add_argument("--config-dir")
    peek.add_argument("command", nargs="?")
    known, _ = peek.parse_known_args(argv)
    return known.command


if __name__ == "__main__":
    sys.exit(main())
