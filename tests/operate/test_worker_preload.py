"""The partition workers' server (runs.py) imports, once, what every run would otherwise import
for itself after the fork (and reads the sentiment model): a forked worker finds them there."""

import sys

import pytest

from visibility_assets.worker_server import worker_processes

# What a run imported on first use before the server preloaded it (~540 modules a worker):
# DuckDB's first bound parameter imports pandas and pyarrow, httpcore's pool anyio, the
# instance its secrets loader and UPath, a run Dagster's in-process executor.
FIRST_USE = ("pandas", "pyarrow.dataset", "httpcore._sync.connection", "anyio._backends._asyncio",
             "dagster._core.executor.in_process", "dagster._core.secrets.env_file", "upath.implementations.local",
             "visibility_assets.definitions")


def _imported(names: tuple[str, ...], sender) -> None:
    from visibility_assets.clean.sentiment_model import shipped_model

    model_read = shipped_model.cache_info().currsize == 1  # before this process asks for it
    sender.send(([name for name in names if name in sys.modules], model_read))
    sender.close()


@pytest.mark.slow  # the server imports the pipeline: a few seconds, once per test process
def test_a_forked_worker_starts_with_what_a_run_would_import_on_first_use():
    context = worker_processes()
    receiver, sender = context.Pipe(duplex=False)
    worker = context.Process(target=_imported, args=(FIRST_USE, sender))
    worker.start()
    sender.close()
    found, model_read = receiver.recv()
    worker.join(30)
    assert worker.exitcode == 0
    assert found == list(FIRST_USE)
    assert model_read  # the learned sentiment model, read once by the server, not by each cleaning step
