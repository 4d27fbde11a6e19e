"""Stopping a command's partition workers (runs.py): once a full disk stops them, the command
still ends as soon as its workers have; nothing it started keeps it alive afterwards."""

import multiprocessing
import threading
import time

from visibility_assets.runs import _LiveWorkers


def test_workers_stopped_by_several_failing_runs_leave_no_timer_once_they_have_ended():
    context = multiprocessing.get_context("spawn")  # default signal handling, whatever the test runner set
    live = _LiveWorkers()
    workers = [context.Process(target=time.sleep, args=(60,)) for _ in range(3)]
    for worker in workers:
        worker.start()
        assert live.add(worker)
    before = set(threading.enumerate())
    for _ in workers:  # each failing run stops them all, as materialize_partitions does
        live.stop_all()
    for worker in workers:
        worker.join(10)
        live.remove(worker)
    assert [worker.exitcode for worker in workers] == [-15] * 3  # terminated at once, not killed later
    assert not live.add(context.Process(target=time.sleep, args=(60,)))  # no new worker once stopping
    live.ended()
    time.sleep(0.05)
    # A pending kill timer is a non-daemon thread: the interpreter would wait out its grace at exit.
    assert [t for t in threading.enumerate() if t not in before and t.is_alive()] == []
