"""How a command starts: the `visibility` module imports nothing heavy of its own, so that the
demo's worker server, started first, imports the pipeline while the command imports its own."""

import subprocess
import sys

from visibility_assets.cli.main import _command_of, runs_workers


def test_importing_the_command_imports_neither_dagster_nor_a_subcommand():
    probe = ("import sys, visibility_assets.cli.main as m;"
             " print(sorted(n for n in sys.modules if n.split('.')[0] in ('dagster', 'pandas', 'duckdb')"
             " or n.startswith('visibility_assets.cli.d')))")
    imported = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True).stdout
    assert imported.strip() == "[]"


def test_the_command_is_read_without_the_subcommands_parsers():
    assert _command_of(["--config-dir", "config", "demo", "--days", "2"]) == "demo"
    assert _command_of(["ask", "demo", "--platform", "kimi"]) == "ask"
    assert _command_of(["sql", "SELECT 1", "--format", "json"]) == "sql"
    assert _command_of([]) is None and _command_of(["--help"]) is None


def test_only_a_demo_that_will_run_starts_the_workers_server():
    assert runs_workers(["--config-dir", "config", "demo", "--days", "2"])
    assert not runs_workers(["demo", "--help"]) and not runs_workers(["-h", "demo"])
    assert not runs_workers(["ask", "demo"]) and not runs_workers(["sql", "SELECT 1"])
