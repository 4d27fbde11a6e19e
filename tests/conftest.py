"""Shared fixtures: an isolated data directory, a real simulator on loopback, a test config."""

from __future__ import annotations

import re
import shutil
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml

from visibility_assets.config import EXAMPLE_CONFIG_DIR, load_config
from visibility_assets.tools.simulator.behaviour import PlatformBehaviour, SimulatorSettings
from visibility_assets.tools.simulator.server import SimulatorServer

from .webhook_receiver import Receiver

FAST = PlatformBehaviour(latency_s=(0.001, 0.01))


@pytest.fixture
def visibility_home(tmp_path, monkeypatch) -> Path:
    """Everything the product stores goes to a fresh folder for each test."""
    home = tmp_path / "home"
    monkeypatch.setenv("VISIBILITY_HOME", str(home))
    monkeypatch.setenv("DAGSTER_HOME", str(home / "dagster_home"))
    return home


@pytest.fixture
def simulator():
    settings = SimulatorSettings(seed=1, default=FAST)
    with SimulatorServer(settings, load_config(EXAMPLE_CONFIG_DIR)) as server:
        yield server


def write_config(target: Path, port: int, *, questions: int | None = 12, rounds: int = 2,
                 rate_limit_rps: float = 200, **platform_overrides) -> Path:
    """The example config pointed at a simulator on `port`, trimmed so tests run fast."""
    target.mkdir(parents=True, exist_ok=True)
    shutil.copy(EXAMPLE_CONFIG_DIR / "brands.yaml", target / "brands.yaml")
    shutil.copy(EXAMPLE_CONFIG_DIR / "prices.yaml", target / "prices.yaml")
    data = yaml.safe_load((EXAMPLE_CONFIG_DIR / "questions.yaml").read_text(encoding="utf-8"))
    if questions is not None:
        data["questions"] = data["questions"][:questions]
    (target / "questions.yaml").write_text(yaml.safe_dump(data, allow_unicode=True), encoding="utf-8")
    platforms = yaml.safe_load((EXAMPLE_CONFIG_DIR / "platforms.yaml").read_text(encoding="utf-8"))
    for platform in platforms["platforms"]:
        platform["base_url"] = re.sub(r":\d+/", f":{port}/", platform["base_url"])
        platform.update(rounds=rounds, rate_limit_rps=rate_limit_rps, **platform_overrides)
    (target / "platforms.yaml").write_text(yaml.safe_dump(platforms, allow_unicode=True), encoding="utf-8")
    return target


@pytest.fixture
def config_dir(tmp_path, simulator, monkeypatch) -> Path:
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


