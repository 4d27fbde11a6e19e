"""Where the collector's requests go, and with which certificate checks."""

import threading

import httpx

from visibility_assets.collect import transport


def test_the_platforms_setting_up_at_once_share_one_tls_context_built_once(monkeypatch):
    """Six platforms' setups ask for the context from six threads at the same moment: the CA
    bundle is loaded once (60-90 ms of CPU each time), and every client gets the same context."""
    built, real = [], httpx.create_ssl_context

    def create_ssl_context(*args, **kwargs):
        built.append(threading.get_ident())
        threading.Event().wait(0.05)  # as long as a real build takes: the others arrive meanwhile
        return real(*args, **kwargs)

    transport._tls_context.cache_clear()
    monkeypatch.setattr(httpx, "create_ssl_context", create_ssl_context)
    start = threading.Barrier(6)
    contexts = []

    def set_up() -> None:
        start.wait()
        contexts.append(transport.tls_context())

    threads = [threading.Thread(target=set_up) for _ in range(6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    transport._tls_context.cache_clear()  # the next test builds its own, with the real httpx
    assert len(built) == 1
    assert len(contexts) == 6 and all(context is contexts[0] for context in contexts)
