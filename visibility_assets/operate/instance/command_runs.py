"""Runs a command executes in its own process (`visibility ask`): tagged with the host and pid
that run them, so that when that process dies without a word (SIGKILL, the OOM killer, a
closed terminal it could not outlive) the next command that looks finds the run and marks it
failed. The daemon's run monitoring (launcher.py) does the same where a daemon runs; a command
cannot count on one.
"""

from __future__ import annotations

import os
import socket

from dagster import DagsterInstance, DagsterRunStatus, RunsFilter
from dagster._core.storage.dagster_run import DagsterRun

from visibility_assets.operate.instance.launcher import worker_alive

HOST_TAG, PID_TAG = "visibility/host", "visibility/pid"
IN_PROGRESS = [DagsterRunStatus.NOT_STARTED, DagsterRunStatus.STARTING, DagsterRunStatus.STARTED,
               DagsterRunStatus.CANCELING]


def command_run_tags() -> dict[str, str]:
    """Tags of a run this process executes itself."""
    return {HOST_TAG: socket.gethostname(), PID_TAG: str(os.getpid())}


def reap_dead_runs(instance: DagsterInstance, tags: dict[str, str] | None = None) -> list[DagsterRun]:
    """Mark failed every run in progress (with these tags) that a command of this host executed
    in a process that is gone (the same pid and start-time check as the launcher's)."""
    dead = []
    filters = RunsFilter(statuses=IN_PROGRESS, tags={**(tags or {}), HOST_TAG: socket.gethostname()})
    for record in instance.get_run_records(filters):
        run, pid = record.dagster_run, record.dagster_run.tags.get(PID_TAG, "")
        if not pid.isdigit() or worker_alive(int(pid), record.create_timestamp.timestamp()):
            continue
        end_as_failed(instance, run, f"the process that ran it (pid {pid}) is gone: killed or interrupted")
        dead.append(run)
    return dead


def end_as_failed(instance: DagsterInstance, run: DagsterRun, message: str) -> None:
    """Mark a run that will never end by itself failed, and free the concurrency slots (the
    judge's pool) its steps hold: a run whose process died never freed them, and every later run
    would wait for them for ever (the daemon frees them only where one runs)."""
    if run.status not in (DagsterRunStatus.SUCCESS, DagsterRunStatus.FAILURE, DagsterRunStatus.CANCELED):
        instance.report_run_failed(run, message)
    if instance.event_log_storage.supports_global_concurrency_limits:
        instance.event_log_storage.free_concurrency_slots_for_run(run.run_id)
