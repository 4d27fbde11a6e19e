"""The run launcher of the shipped instances: Dagster's default one, which starts each run
worker as a process of the code server, plus the health check that run monitoring needs.

Without it a run whose worker was killed (OOM killer, SIGKILL, a reboot) stays STARTED for
ever, and the run queue keeps every later run of its platform waiting behind it. With it the
daemon's run monitoring sees the worker gone, marks the run failed, and the run-retry daemon
starts it again (the journal resumes it without re-sending what was stored).

The worker is found by the pid its RUN_START event carries, on this machine: the daemon and
the code server it starts run side by side (docs/deployment.md).
"""

from __future__ import annotations

import os
from pathlib import Path

from dagster import DagsterEventType
from dagster._core.launcher import CheckRunHealthResult, DefaultRunLauncher, WorkerStatus
from dagster._core.storage.dagster_run import DagsterRun


class MonitoredRunLauncher(DefaultRunLauncher):
    @property
    def supports_check_run_worker_health(self) -> bool:
        return True

    def check_run_worker_health(self, run: DagsterRun) -> CheckRunHealthResult:
        records = self._instance.get_records_for_run(run.run_id, of_type=DagsterEventType.RUN_START, limit=1).records
        event = records[0].event_log_entry.dagster_event if records else None
        if event is None or not event.pid:
            return CheckRunHealthResult(WorkerStatus.UNKNOWN, "the run worker has not started yet")
        if worker_alive(event.pid, records[0].event_log_entry.timestamp):
            return CheckRunHealthResult(WorkerStatus.RUNNING)
        return CheckRunHealthResult(WorkerStatus.FAILED, f"the run worker (pid {event.pid}) is gone: killed or crashed")


def worker_alive(pid: int, started_by: float, proc: Path = Path("/proc")) -> bool:
    """A live (not zombie) process with this pid that existed when the run started (epoch
    seconds), not a later process that was given the pid again."""
    try:
        stat = (proc / str(pid) / "stat").read_text()
        boot = next(float(line.split()[1]) for line in (proc / "stat").read_text().splitlines()
                    if line.startswith("btime "))
    except (OSError, StopIteration, ValueError):
        return False
    # Fields after the command (which may hold spaces): state is field 3, start time field 22.
    fields = stat[stat.rindex(")") + 2:].split()
    state, start_ticks = fields[0], int(fields[19])
    started_at = boot + start_ticks / os.sysconf("SC_CLK_TCK")
    return state not in ("Z", "X") and started_at <= started_by + 5
