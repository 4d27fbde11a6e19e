"""A small warehouse for the workspace's tests, built as the nightly job's assets build it but
without Dagster's bookkeeping: answers collected from the simulated platforms in process and
published, cleaned, then every SQL model materialized over all the partitions."""

from __future__ import annotations

import re
import uuid
from datetime import date, timedelta
from pathlib import Path

from starlette.testclient import TestClient

from tests.conftest import FAST, IN_PROCESS_URL, in_process, write_config
from visibility_assets.clean.defs import clean_partitions
from visibility_assets.collect.collector import collect_partitions
from visibility_assets.collect.publish import publish
from visibility_assets.config import VisibilityConfig, load_config
from visibility_assets.core.partitions import Partition
from visibility_assets.judge.defs import read_items, write_outcomes
from visibility_assets.judge.run import judge_partition
from visibility_assets.measure.project import load_project
from visibility_assets.measure.runner import materialize_models
from visibility_assets.serve.accounts import Accounts
from visibility_assets.serve.app import create_app
from visibility_assets.serve.settings import ServeSettings
from visibility_assets.tools.simulator.behaviour import SimulatorSettings
from visibility_assets.warehouse.lake import LakeSettings
from visibility_assets.warehouse.resource import WarehouseResource


def build_lake(home: Path, config: VisibilityConfig, last_day: date, days: int,
               platforms: tuple[str, ...], judged: tuple[str, ...] = ()) -> LakeSettings:
    settings = LakeSettings.from_env(home)
    warehouse = WarehouseResource.from_settings(settings)
    partitions = [Partition(last_day - timedelta(days=offset), name)
                  for offset in range(days - 1, -1, -1) for name in platforms]
    run_id = uuid.uuid4().hex
    with in_process(SimulatorSettings(seed=3, default=FAST)):
        outcomes = collect_partitions(config, partitions, run_id, settings)
        assert all(o.error is None for o in outcomes), [str(o.error) for o in outcomes]
        publish(warehouse, outcomes, run_id)
        clean_partitions(partitions, config.catalog, warehouse, run_id, config.domains,
                         weights=config.question_weights)
        # The judge (judge.yaml) labels the `judged` platforms' answers; the others keep the lexicon's.
        chosen = [p for p in partitions if p.platform in judged]
        if chosen:
            items = read_items(warehouse, chosen)
            outcomes = [judge_partition(config, settings, str(day), name,
                                        [i for i in items if (i.date, i.platform) == (str(day), name)], run_id)
                        for day, name in chosen]
            write_outcomes(warehouse, outcomes, chosen)
    project = load_project()
    # every model in two transactions, the incremental ones over all the partitions at once
    materialize_models(warehouse, project, list(project.models.values()), partitions, run_id)
    return settings

LAST_DAY = date(2026, 11, 20)
DAYS = 5
DAY, FIRST_DAY = LAST_DAY.isoformat(), (LAST_DAY - timedelta(days=DAYS - 1)).isoformat()
PLATFORMS = ("deepseek", "kimi")
JUDGED = ("kimi",)  # the judge labels kimi's answers; deepseek's keep the lexicon's labels
PASSWORD = "correct horse battery"
USERS = {"vera": "viewer", "ana": "analyst", "adam": "admin"}
HOSTILE_BRAND = """O'Neil "Cloud"'); DROP TABLE mention_metrics; -- <b>bold</b>"""


class Workspace:
    """A built warehouse, its accounts, and the app over them."""

    def __init__(self, home: Path, config: VisibilityConfig, lake: LakeSettings):
        self.home, self.config, self.lake = home, config, lake
        self.settings = ServeSettings(home=home, secret=b"test-secret-" + bytes(20), session_s=3600)
        self.accounts = Accounts.under(home)
        self.app = create_app(self.settings, config, lake)

    def client(self, user: str | None = None) -> TestClient:
        """A browser: logged in as `user` when given."""
        client = TestClient(self.app, base_url="http://workspace.test")
        if user is not None:
            response = log_in(client, user, PASSWORD)
            assert response.status_code == 303, response.text[:500]
        return client


def log_in(client: TestClient, name: str, password: str):
    form = client.get("/login")
    token = re.search(r'name="csrf" value="([^"]*)"', form.text).group(1)
    return client.post("/login", data={"name": name, "password": password, "csrf": token, "next": "/overview"},
                       follow_redirects=False)


def csrf_of(page_html: str) -> str:
    return re.search(r'name="csrf" value="([^"]*)"', page_html).group(1)


def built_workspace(home: Path, days: int = DAYS, judged: tuple[str, ...] = JUDGED) -> Workspace:
    """The `workspace` fixture (tests/conftest.py): the example config with a hostile brand name
    added, `days` days of PLATFORMS up to LAST_DAY collected and measured (the `judged` platforms'
    sentiment by the judge), and a user of each role."""
    directory = write_config(home / "config", IN_PROCESS_URL)
    with open(directory / "brands.yaml", "a", encoding="utf-8") as brands:  # a name that is hostile SQL and HTML
        brands.write(f"  - name: '{HOSTILE_BRAND.replace(chr(39), chr(39) * 2)}'\n    category: cloud\n"
                     "    aliases: [Hostile Cloud]\n")
    (directory / "judge.yaml").write_text("judge:\n  platform: deepseek\n", encoding="utf-8")
    config = load_config(directory)
    lake = build_lake(home, config, LAST_DAY, days, PLATFORMS, judged=judged)
    built = Workspace(home, config, lake)
    for name, role in USERS.items():
        built.accounts.add(name, role, PASSWORD)
    return built
