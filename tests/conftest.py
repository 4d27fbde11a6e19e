"""Shared fixtures: an isolated data directory, the simulated platforms (in process, or a real
server on loopback), a test config pointed at them, a webhook receiver."""

from __future__ import annotations

import os
import re
import shutil
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
import yaml

from visibility_assets.collect.transport import mounted
from visibility_assets.config import EXAMPLE_CONFIG_DIR, load_config
from visibility_assets.tools.simulator.behaviour import PlatformBehaviour, SimulatorSettings
from visibility_assets.tools.simulator.server import SimulatorServer
from visibility_assets.tools.simulator.transport import IN_PROCESS_URL, SimulatorTransport

from .webhook_receiver import Receiver

FAST = PlatformBehaviour(latency_s=(0.001, 0.01))
SLOW_TIERS = ("dagster", "system")
BUILT_WAREHOUSES = ("workspace", "month_workspace")  # fixtures that build a warehouse: 10 to 30 s a worker
RAM_DISK = Path("/dev/shm")
RAM_DISK_ROOM = 4 << 30  # bytes free it needs to hold the tests' data directories


def pytest_sessionstart(session):
    import_anyio_now()


def import_anyio_now() -> None:
    """Every module of anyio imported here, in the main thread. anyio imports its modules when a
    name is first used, and pytest rewrites the asserts of a plugin's package (anyio registers
    one) with ast.parse, so the first use in a server's thread parsed there; Python 3.11 before
    3.11.8 keeps one AST recursion counter for all threads, and two threads parsing at once
    failed a workspace test with "AST constructor recursion depth mismatch" (a fresh clone's
    CI run, where no rewritten module is cached yet)."""
    import importlib
    import pkgutil

    import anyio

    for module in pkgutil.walk_packages(anyio.__path__, "anyio."):
        try:
            importlib.import_module(module.name)
        except ImportError:
            pass  # a backend or a helper for what is not installed (trio, subinterpreters)


@pytest.hookimpl(tryfirst=True)  # before pytest's own tmp_path set-up reads the temporary root
def pytest_configure(config):
    """The tests' temporary directories on the machine's RAM disk where it has room: the data
    directories' commits (DuckDB, SQLite, Dagster's event log) then wait on no disk sync: the
    lake and metrics tests took 9-20% less time in alternating runs. Each test still writes and
    reads real files; pytest numbers its runs there as under /tmp. PYTEST_DEBUG_TEMPROOT or
    --basetemp set by the caller wins."""
    if config.option.basetemp or "PYTEST_DEBUG_TEMPROOT" in os.environ:
        return
    try:
        room = shutil.disk_usage(RAM_DISK).free
    except OSError:
        return  # no RAM disk here
    if room >= RAM_DISK_ROOM and os.access(RAM_DISK, os.W_OK):
        os.environ["PYTEST_DEBUG_TEMPROOT"] = str(RAM_DISK)


def pytest_collection_modifyitems(config, items):
    """Dagster and system tests, and tests over a built warehouse, are the slow tier with those
    marked slow where they stand: `-m "not slow"` runs the others (no I/O, and loopback HTTP to
    servers in threads of the test process, each well under a second)."""
    for item in items:
        if (any(item.get_closest_marker(tier) for tier in SLOW_TIERS)
                or any(name in BUILT_WAREHOUSES for name in getattr(item, "fixturenames", ()))):
            item.add_marker(pytest.mark.slow)
    items[:] = long_tests_first(items, workers_of(config))


def workers_of(config) -> int:
    """How many pytest-xdist workers share the run, as each worker (which collects) is told."""
    workerinput = getattr(config, "workerinput", None)
    return int(workerinput["workercount"]) if workerinput else 1


def long_tests_first(items: list, workers: int) -> list:
    """The tests marked long dealt to the front of each worker's share, a module's together (they
    share its fixtures: a webserver, a warehouse), the others after them in their order.
    pytest-xdist's work stealing hands worker i the next len(pending) // (workers - i) tests;
    when the long ones came where they stand, the last of them started late and one worker
    waited for it alone (82 s of a 540 s suite, measured)."""
    if workers == 1:
        return items
    long_by_module: dict[str, list] = {}
    others = []
    for item in items:
        if item.get_closest_marker("long"):
            long_by_module.setdefault(item.nodeid.split("::")[0], []).append(item)
        else:
            others.append(item)
    modules = list(long_by_module.values())
    ordered, remaining = [], len(items)
    for worker in range(workers):
        share_size = remaining // (workers - worker)
        share = [item for module in modules[worker::workers] for item in module]
        take = max(0, share_size - len(share))
        ordered += share + others[:take]
        others = others[take:]
        remaining -= share_size
    return ordered + others


@pytest.fixture
def visibility_home(tmp_path, monkeypatch) -> Path:
    """Everything the product stores goes to a fresh folder for each test."""
    home = tmp_path / "home"
    monkeypatch.setenv("VISIBILITY_HOME", str(home))
    monkeypatch.setenv("DAGSTER_HOME", str(home / "dagster_home"))
    return home


@pytest.fixture
def simulator():
    """The simulated platforms on a loopback port, for tests of HTTP itself and for processes."""
    settings = SimulatorSettings(seed=1, default=FAST)
    with SimulatorServer(settings, load_config(EXAMPLE_CONFIG_DIR)) as server:
        yield server


@pytest.fixture
def simulated():
    """The simulated platforms in this process (no socket): what the collector of a Dagster run
    in this process reaches at IN_PROCESS_URL. `simulated.app` holds what they received."""
    with in_process(SimulatorSettings(seed=1, default=FAST)) as transport:
        yield transport


@contextmanager
def in_process(settings: SimulatorSettings) -> Iterator[SimulatorTransport]:
    """Simulated platforms of these settings at IN_PROCESS_URL while the block runs."""
    transport = SimulatorTransport(settings, load_config(EXAMPLE_CONFIG_DIR))
    with mounted(IN_PROCESS_URL, transport):
        yield transport


def write_config(target: Path, port: int | str, *, questions: int | None = 12, rounds: int = 2,
                 rate_limit_rps: float = 200, **platform_overrides) -> Path:
    """The example config pointed at a simulator on loopback `port`, or at a base URL such as
    IN_PROCESS_URL, trimmed so tests run fast."""
    base = port if isinstance(port, str) else f"http://127.0.0.1:{port}"
    target.mkdir(parents=True, exist_ok=True)
    shutil.copy(EXAMPLE_CONFIG_DIR / "brands.yaml", target / "brands.yaml")
    shutil.copy(EXAMPLE_CONFIG_DIR / "prices.yaml", target / "prices.yaml")
    data = _yaml_load(EXAMPLE_CONFIG_DIR / "questions.yaml")
    if questions is not None:
        data["questions"] = data["questions"][:questions]
    (target / "questions.yaml").write_text(_yaml_dump(data), encoding="utf-8")
    platforms = _yaml_load(EXAMPLE_CONFIG_DIR / "platforms.yaml")
    for platform in platforms["platforms"]:
        platform["base_url"] = re.sub(r"^https?://[^/]+", base, platform["base_url"])
        platform.update(rounds=rounds, rate_limit_rps=rate_limit_rps, **platform_overrides)
    (target / "platforms.yaml").write_text(_yaml_dump(platforms), encoding="utf-8")
    return target


def _yaml_load(path: Path):
    """yaml.safe_load with libyaml's C parser: the same data, about 7 times faster on the example
    questions.yaml (write_config runs for most tests)."""
    return yaml.load(path.read_text(encoding="utf-8"), Loader=yaml.CSafeLoader)


def _yaml_dump(data) -> str:
    return yaml.dump(data, Dumper=yaml.CSafeDumper, allow_unicode=True)


@pytest.fixture(scope="session")
def workspace(tmp_path_factory):
    """A warehouse of a few days and platforms, its accounts (one user per role) and the
    workspace app over it (tests/workspace_lake.py), built once per test process."""
    from tests.workspace_lake import built_workspace
    return built_workspace(tmp_path_factory.mktemp("workspace-home"))


@pytest.fixture(scope="session")
def month_workspace(tmp_path_factory):
    """The same over 30 days (the judge left out: it would double the build's 30 s), for the tests
    that draw periods of up to 90 days."""
    from tests.workspace_lake import built_workspace
    return built_workspace(tmp_path_factory.mktemp("month-workspace-home"), days=30, judged=())


@pytest.fixture
def config_dir(tmp_path, simulated, monkeypatch) -> Path:
    """The test config, as $VISIBILITY_CONFIG_DIR, pointed at the simulated platforms in process."""
    directory = write_config(tmp_path / "config", IN_PROCESS_URL)
    monkeypatch.setenv("VISIBILITY_CONFIG_DIR", str(directory))
    return directory


@pytest.fixture
def loopback_config_dir(tmp_path, simulator, monkeypatch) -> Path:
    """The same, pointed at the simulator on loopback: for a collection in another process."""
    directory = write_config(tmp_path / "config", simulator.port)
    monkeypatch.setenv("VISIBILITY_CONFIG_DIR", str(directory))
    return directory


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    """A webhook receiver on loopback (tests/webhook_receiver.py)."""
    receiver = Receiver()
    thread = threading.Thread(target=receiver.server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True)
    thread.start()
    yield receiver
    receiver.server.shutdown()
    receiver.server.server_close()


