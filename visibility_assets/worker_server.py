"""The server the partitions' worker processes fork from (multiprocessing's forkserver), which
imports the pipeline once for all of them. Light on purpose: a command that will run partitions
starts it before its own imports, so that the two processes import side by side."""

from __future__ import annotations

import multiprocessing

# What the server imports once, for every worker it forks: the pipeline, and the command's own
# main module (each worker would otherwise import it again, as multiprocessing's __mp_main__).
WORKER_PRELOAD = ["__main__", "visibility_assets.run_worker"]


def worker_processes():
    """Each partition runs in a process of its own (a crash or a leak stays with its run), forked
    from a server that imported the pipeline once: six workers each importing Dagster at the
    same moment cost ~2 CPU-s apiece on two cores before the first request went out."""
    context = multiprocessing.get_context("forkserver")
    context.set_forkserver_preload(WORKER_PRELOAD)
    return context


def start_worker_server() -> None:
    """Start the server now (once per process), so that its imports overlap the caller's own."""
    from multiprocessing import forkserver

    worker_processes()
    forkserver.ensure_running()
