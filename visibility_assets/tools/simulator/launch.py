"""Start the simulator where the config's platforms expect it (their loopback base_url)."""

from __future__ import annotations

from contextlib import ExitStack, contextmanager
from urllib.parse import urlsplit

import httpx

from visibility_assets.config import VisibilityConfig
from visibility_assets.tools.simulator.behaviour import SimulatorSettings
from visibility_assets.tools.simulator.server import SimulatorServer

LOOPBACK_HOSTS = {"127.0.0.1", "localhost"}


class SimulatorPortBusy(Exception):
    pass


def simulated_addresses(config: VisibilityConfig) -> dict[tuple[str, int], list[str]]:
    """(host, port) -> platform names, for the platforms whose base_url is on loopback."""
    addresses: dict[tuple[str, int], list[str]] = {}
    for platform in config.platforms:
        url = urlsplit(platform.base_url)
        if url.hostname in LOOPBACK_HOSTS:
            addresses.setdefault((url.hostname, url.port or 80), []).append(platform.name)
    return addresses


def _simulator_answers(host: str, port: int) -> bool:
    try:
        return httpx.get(f"http://{host}:{port}/health", timeout=1).json().get("simulator") is True
    except (httpx.HTTPError, ValueError, AttributeError):
        return False


@contextmanager
def running_simulators(config: VisibilityConfig, settings: SimulatorSettings):
    """Serve every loopback platform of the config, each address by a simulator of our own with
    `settings`: one already listening there (another demo's, a `visibility simulate`, with its own
    faults, prices and model switches) is never borrowed; the port is said to be busy instead."""
    with ExitStack() as stack:
        servers = []
        for (host, port), names in simulated_addresses(config).items():
            settings_here = SimulatorSettings(settings.seed, settings.time_scale, settings.default,
                                              settings.platforms, frozenset(names))
            server = SimulatorServer(settings_here, config, host=host, port=port)
            try:
                server.start_in_thread()
            except OSError as exc:
                holder = ("another simulator (a `visibility simulate`, or another demo) answers there"
                          if _simulator_answers(host, port) else "another program listens there")
                raise SimulatorPortBusy(
                    f"cannot start the simulator on {host}:{port} ({exc.strerror or exc}): {holder}; platforms"
                    f" {', '.join(names)} expect it there: stop it, or change their base_url"
                ) from None
            stack.callback(server.stop)
            servers.append(server)
        yield servers
